/** The graph scenarios on every driver. */
import { graphScenarios } from "../scenarios/graphs.ts"
import { drivers } from "../support/drivers.ts"

for (const driver of drivers("graphs").all) graphScenarios(driver.name, async () => driver.saver())
