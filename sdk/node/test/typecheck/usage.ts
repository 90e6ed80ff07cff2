// Compiled by test/pack.test.ts against the built declarations (the package
// imports itself by name) with Express's and Node's own types: the README's
// uses must type-check as written, in strict mode.
import { createServer } from "node:http";
import express from "express";
import { Strata, classifyBot, edgeMiddleware, expressMiddleware, withStrata, type BotInfo, type Stats } from "@strata/node";

const strata = new Strata({ apiKey: "st_live_k", host: "https://analytics.example.com", onError: (e) => console.error(e.status, e.code) });
strata.capture({ event: "subscription_renewed", distinctId: "user_1842", properties: { plan: "pro" }, timestamp: new Date() });

const app = express();
app.use(expressMiddleware(strata));
app.use(expressMiddleware({ apiKey: "k", host: "https://analytics.example.com" }));

const plain = expressMiddleware(strata);
createServer((req, res) => plain(req, res, () => res.end("ok")));

const track = edgeMiddleware(strata);
const bot: BotInfo | null = track(new Request("https://shop.example.com/"), { waitUntil() {} });

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}
export const worker = {
  fetch: withStrata(strata, async (request: Request, _env: unknown, _ctx: ExecutionContext) => new Response(request.url)),
};

export async function end(): Promise<[string, Stats, BotInfo | null, BotInfo | null]> {
  const variant: string = await strata.getVariant("pricing_copy_test", "user_1842");
  await strata.shutdown();
  return [variant, strata.stats(), bot, classifyBot(undefined)];
}
