/** copyThread, prune, retention and threadStorage on every driver. */
import { lifecycleScenarios } from "../scenarios/lifecycle.ts"
import { pruningScenarios } from "../scenarios/pruning.ts"
import { threadStorageScenarios } from "../scenarios/threadStorage.ts"
import { drivers } from "../support/drivers.ts"

for (const driver of drivers("lifecycle").all) {
  lifecycleScenarios(driver.name, async () => driver.saver())
  pruningScenarios(driver.name, async () => driver.saver())
  threadStorageScenarios(driver.name, async () => driver.saver())
}
