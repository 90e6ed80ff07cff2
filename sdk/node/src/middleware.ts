import { classifyBot, type BotInfo } from "./bots.js";
import { MAX_USER_AGENT, Strata } from "./client.js";
import type { StrataOptions } from "./types.js";

/**
 * The parts of a Node request the Express middleware reads: Express's
 * request, or a plain `http.IncomingMessage` (then `url` is the path and the
 * scheme comes from the socket).
 */
export interface NodeRequest {
  headers: Record<string, string | string[] | undefined>;
  url?: string;
  /** Express: the path and query as received, before any router stripped a mount path. */
  originalUrl?: string;
  /** Express: `http` or `https`, honouring its `trust proxy` setting. */
  protocol?: string;
  /** The connection: a TLSSocket (`encrypted: true`) means https. */
  socket?: unknown;
}

/** An Express (or Connect) middleware. */
export type NodeMiddleware = (req: NodeRequest, res: unknown, next: (err?: unknown) => void) => void;

/**
 * An object with `waitUntil`, which keeps an edge runtime running until a
 * promise settles after the response is sent: Cloudflare Workers'
 * ExecutionContext, Next.js's NextFetchEvent.
 */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * expressMiddleware returns an Express middleware that records the page
 * views of AI bots. For a request whose User-Agent is on the allowlist it
 * queues a `$pageview` (stored by ingest as `$bot_pageview`) and calls
 * `next()` at once: it never waits for the network and never throws, and
 * the client's bounded queue caps the memory it can take. Other requests
 * cost one classification of the user agent.
 *
 * It takes a `Strata` client, or the options to make one.
 */
export function expressMiddleware(client: Strata | StrataOptions): NodeMiddleware {
  const c = client instanceof Strata ? client : new Strata(client);
  return function strataBots(req, _res, next) {
    try {
      const ua = req.headers["user-agent"];
      // Classified here first, so that a person's request allocates nothing (an
      // object with getters for the URL cost 10 µs a request in the benchmark);
      // a bot's is classified again by captureBotPageview, half a microsecond.
      if (typeof ua === "string" && ua.length <= MAX_USER_AGENT && classifyBot(ua)) {
        c.captureBotPageview({ userAgent: ua, url: nodeUrl(req), referrer: header(req, "referer") });
      }
    } catch {
      // Analytics must never fail the request.
    }
    next();
  };
}

/**
 * edgeMiddleware returns a function for Fetch API runtimes (Next.js
 * middleware, Cloudflare Workers, Deno, Bun, or Node with a Request) that
 * records the request when it comes from an AI bot. It only reads the
 * request's URL and headers, so the request passes on unchanged; it returns
 * the bot, or null. Given a `ctx` with `waitUntil`, it hands it the
 * delivery of the event, so that a runtime which stops after the response
 * (Workers, Vercel) still sends it; otherwise the client's batching sends it.
 */
export function edgeMiddleware(client: Strata | StrataOptions): (request: Request, ctx?: WaitUntil) => BotInfo | null {
  const c = client instanceof Strata ? client : new Strata(client);
  return (request, ctx) => {
    try {
      const headers = request.headers;
      const bot = c.captureBotPageview({ userAgent: headers.get("user-agent"), url: request.url, referrer: headers.get("referer") });
      if (bot && ctx && typeof ctx.waitUntil === "function") ctx.waitUntil(c.flush());
      return bot;
    } catch {
      return null;
    }
  };
}

/**
 * withStrata wraps a Fetch API handler, `(request, ...rest) => response`,
 * so that AI-bot requests are recorded before it runs; the handler gets the
 * request and the other arguments unchanged and its answer is returned as
 * is. The first of the other arguments that has `waitUntil` (Workers' `ctx`,
 * Next.js's `event`) is used as edgeMiddleware's `ctx`.
 */
export function withStrata<A extends unknown[], R>(
  client: Strata | StrataOptions,
  handler: (request: Request, ...rest: A) => R,
): (request: Request, ...rest: A) => R {
  const track = edgeMiddleware(client);
  return (request, ...rest) => {
    track(request, rest.find(isWaitUntil));
    return handler(request, ...rest);
  };
}

function isWaitUntil(x: unknown): x is WaitUntil {
  return typeof x === "object" && x !== null && typeof (x as WaitUntil).waitUntil === "function";
}

/** header returns a request header's first value, or undefined. */
function header(req: NodeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** nodeUrl rebuilds the absolute URL of a Node request: scheme, Host and the original path. */
function nodeUrl(req: NodeRequest): string {
  const scheme = req.protocol || ((req.socket as { encrypted?: boolean } | null | undefined)?.encrypted ? "https" : "http");
  const host = header(req, "host") || "localhost";
  return scheme + "://" + host + (req.originalUrl ?? req.url ?? "/");
}
