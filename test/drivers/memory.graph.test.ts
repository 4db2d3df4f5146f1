import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import { graphScenarios } from "../scenarios/graphs.ts"

graphScenarios("memory", async () => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory))
