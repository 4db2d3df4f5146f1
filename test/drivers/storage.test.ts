/** The storage contract on memory, PGlite and PostgreSQL. */
import { storageScenarios } from "../scenarios/storage.ts"
import { drivers } from "../support/drivers.ts"

const { memory, pglite, postgres } = drivers("storage")
for (const driver of [memory, pglite, postgres]) storageScenarios(driver.name, driver.layer())
