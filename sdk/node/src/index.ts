// @strata/node: the server SDK of Strata. README.md describes every export.
export { classifyBot, isAiBot, categoryLabel, type BotInfo, type BotCategory } from "./bots.js";
export { allowlistVersion } from "./bots.gen.js";
export { Strata, BOT_DISTINCT_ID, type BotRequest } from "./client.js";
export { expressMiddleware, edgeMiddleware, withStrata, type NodeRequest, type NodeMiddleware, type WaitUntil } from "./middleware.js";
export { StrataError } from "./types.js";
export type { CaptureMessage, Stats, StrataOptions, VariantOptions, Properties, FlagConfig, RemoteConfig, Rejection, IngestResult } from "./types.js";
export { VERSION } from "./version.js";
