/**
 * `langgraph-checkpoint-effect/testing`: a property-based contract kit for
 * any LangGraph checkpointer.
 *
 * @since 0.1.0
 */
export {
  canonical,
  check,
  type ContractOptions,
  type ContractReport,
  ContractViolation,
  describe,
  runContract,
  runContractOnLayer
} from "./Contract.ts"
export { Model, type StoredCheckpoint } from "./Model.ts"
export { names, Operation, operations, Value } from "./Operations.ts"
