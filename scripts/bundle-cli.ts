/**
 * The last step of `npm run build`: the `langgraph-checkpoints` executable
 * bundled beside the compiled CLI (see `harness/package.ts`).
 */
import { join } from "node:path"
import { bundleCli } from "../harness/package.ts"

await bundleCli(join(import.meta.dirname, "..", "dist", "internal", "bin"))
