// A fake Strata for the unit tests: a node:http server on 127.0.0.1 that
// records every request and answers as the test says, including never
// ("hang") and by dropping the connection ("destroy").
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | "hang" | "destroy";

export interface FakeServer {
  url: string;
  requests: Recorded[];
  /** The events of every POST /e, in arrival order. */
  events(): Record<string, unknown>[];
  close(): Promise<void>;
}

/** accepted answers a batch the way ingest does when it stores every event. */
export function accepted(r: Recorded): Answer {
  const n = JSON.parse(r.body).batch.length;
  return { status: 202, body: { accepted: n, rejected: [] } };
}

export async function fakeServer(answer: (r: Recorded, i: number) => Answer = accepted): Promise<FakeServer> {
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() };
      requests.push(r);
      const a = answer(r, requests.length - 1);
      if (a === "hang") return void hanging.push(res);
      if (a === "destroy") return void req.socket.destroy();
      const text = a.body === undefined ? "" : typeof a.body === "string" ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers }).end(text);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    events: () => requests.filter((r) => r.url === "/e").flatMap((r) => JSON.parse(r.body).batch),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** closedPort returns a loopback URL on which nothing listens (connections are refused). */
export async function closedPort(): Promise<string> {
  const s = await fakeServer();
  await s.close();
  return s.url;
}

/** waitUntil polls cond every 5 ms until it holds or ms pass. */
export async function waitUntil(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
