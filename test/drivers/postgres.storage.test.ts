/**
 * The storage contract on PostgreSQL.
 */
import { storageScenarios } from "../scenarios/storage.ts"
import { postgresLayer } from "../support/databases.ts"

storageScenarios("postgres", postgresLayer("storage", { poolSize: 4 }))
