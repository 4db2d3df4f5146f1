/**
 * The property-based contract kit: runs generated sequences of operations
 * against any `BaseCheckpointSaver` and checks every result against the
 * reference {@link Model}. A failure shrinks to a minimal sequence and is
 * reported as a readable script with the token that replays it.
 *
 * @since 0.1.0
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { Arbitrary, Effect, type Layer } from "effect"
import type { CheckpointStorage } from "../CheckpointStorage.ts"
import { EffectCheckpointSaver } from "../Saver.ts"
import { describe } from "./Describe.ts"
import { type Operation, operations } from "./Operations.ts"
import { Run } from "./Run.ts"
import { apply } from "./Steps.ts"
import { ContractViolation, violation } from "./Violation.ts"

export { describe } from "./Describe.ts"
export { canonical, ContractViolation } from "./Violation.ts"

/**
 * Runs one sequence against a saver, checking every read against the model.
 * Fails with the first {@link ContractViolation} (or the saver's own error).
 *
 * @since 0.1.0
 */
export const check = (
  saver: BaseCheckpointSaver,
  sequence: ReadonlyArray<Operation>
): Effect.Effect<void, ContractViolation> =>
  Effect.tryPromise({
    try: () => run(saver, sequence),
    catch: (error) =>
      error instanceof ContractViolation
        ? error
        : new ContractViolation({ step: sequence.length, operation: "the whole sequence", detail: String(error) })
  })

const run = async (saver: BaseCheckpointSaver, sequence: ReadonlyArray<Operation>): Promise<void> => {
  const state = new Run(saver)
  for (const [step, operation] of sequence.entries()) {
    try {
      await apply(state, { step, operation })
    } catch (error) {
      if (error instanceof ContractViolation) throw error
      throw violation(
        { step, operation },
        `the saver failed: ${error instanceof Error ? error.message : String(error)}`
      )
    }
  }
}

/**
 * What `runContract` runs, and how long.
 *
 * @since 0.1.0
 */
export interface ContractOptions<S extends BaseCheckpointSaver> {
  /** A name for the report. */
  readonly name: string
  /** A fresh, empty saver for one sequence. */
  readonly create: () => S | Promise<S>
  /** Releases a saver `create` made. */
  readonly destroy?: ((saver: S) => void | Promise<void>) | undefined
  /** How many sequences to try (default 50). */
  readonly runs?: number | undefined
  /** A seed, for a reproducible run. */
  readonly seed?: string | number | undefined
  /** A replay token from an earlier report, to run exactly its failing sequence. */
  readonly replay?: string | undefined
  /** How large sequences grow (default 60: about 30 operations on average). */
  readonly size?: number | undefined
}

/**
 * What `runContract` found: passed, or the minimal failing sequence.
 *
 * @since 0.1.0
 */
export interface ContractReport {
  readonly name: string
  readonly passed: boolean
  readonly runs: number
  /** On failure: the minimal failing sequence as a script, and how to replay it. */
  readonly failure?: {
    readonly message: string
    readonly steps: ReadonlyArray<string>
    readonly replay: string
    readonly script: string
  }
}

/**
 * The contract for an Effect `CheckpointStorage` layer: each sequence runs on
 * a fresh build of it, through the adapter.
 *
 * @since 0.1.0
 */
export const runContractOnLayer = (
  options: Omit<ContractOptions<EffectCheckpointSaver>, "create" | "destroy"> & {
    readonly layer: Layer.Layer<CheckpointStorage, unknown>
  }
): Promise<ContractReport> =>
  runContract({
    ...options,
    create: () => EffectCheckpointSaver.fromLayer(options.layer),
    destroy: (saver) => saver.close()
  })

/**
 * Runs the contract against a saver: `runs` generated sequences, each on a
 * fresh saver. Works outside any test runner.
 *
 * @since 0.1.0
 */
export const runContract = <S extends BaseCheckpointSaver>(options: ContractOptions<S>): Promise<ContractReport> =>
  Effect.runPromise(Effect.gen(function*() {
    const result = yield* Arbitrary.checkEffect(
      operations,
      (sequence) =>
        Effect.acquireUseRelease(
          Effect.promise(async () => options.create()),
          (saver) => Effect.as(check(saver, sequence), true),
          (saver) => Effect.promise(async () => options.destroy?.(saver))
        ),
      {
        runs: options.runs ?? 50,
        size: options.size ?? 60,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(options.replay === undefined ? {} : { replay: options.replay as never })
      }
    )
    if (result._tag === "Passed") return { name: options.name, passed: true, runs: result.runs }
    if (result._tag !== "Falsified") {
      return {
        name: options.name,
        passed: false,
        runs: "runs" in result ? result.runs : 0,
        failure: { message: Arbitrary.formatCheckFailure(result) ?? result._tag, steps: [], replay: "", script: "" }
      }
    }
    const error = result.failure._tag === "ReturnedFalse" ? "returned false" : result.failure.error
    // Steps after the one that failed play no part.
    const failed = error instanceof ContractViolation ? error.step + 1 : result.shrunkInput.length
    const steps = result.shrunkInput.slice(0, failed).map((operation, i) => `${i}. ${describe(operation)}`)
    const message = error instanceof Error ? error.message : String(error)
    const script = [
      `${options.name} breaks the checkpointer contract after ${result.runs} run(s) (shrunk ${result.shrinks} times):`,
      message,
      "steps:",
      ...steps.map((step) => `  ${step}`),
      `replay: runContract({ ..., replay: ${JSON.stringify(String(result.replay))} })`
    ].join("\n")
    return {
      name: options.name,
      passed: false,
      runs: result.runs,
      failure: { message, steps, replay: String(result.replay), script }
    }
  }))
