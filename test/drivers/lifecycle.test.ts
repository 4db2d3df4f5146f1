/** copyThread and prune on every driver. */
import { lifecycleScenarios } from "../scenarios/lifecycle.ts"
import { drivers } from "../support/drivers.ts"

for (const driver of drivers("lifecycle").all) lifecycleScenarios(driver.name, async () => driver.saver())
