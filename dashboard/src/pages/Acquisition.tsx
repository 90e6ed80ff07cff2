import { api } from "../api";
import { BreakdownCard, type BreakdownProps } from "../components/BreakdownCard";
import { num } from "../charts/time";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { Table } from "../components/Table";
import { when } from "../format";
import { useLoad } from "../load";
import { during, type DateRange } from "../range";
import { useQueryState } from "../router";
import type { BotsResult, DataEnv, Product } from "../types";

/** The two kinds of AI bot, as the panel names them. */
export function botType(category: string, label: string): string {
  if (category === "ai_assistant") return "AI assistant (live fetch)";
  if (category === "ai_crawler") return "AI crawler (training/index)";
  return label || category;
}

/** channelNames names the channels ingest assigns (docs/ingest.md, "Sources and channels"). */
export const channelNames: Record<string, string> = {
  direct: "Direct",
  search: "Search",
  social: "Social",
  ai: "AI assistants",
  referral: "Referral",
  email: "Email",
  paid: "Paid",
};

/** The acquisition tables: visitors by channel, source and UTM tag, each counting only the page views that have one. */
const sources: BreakdownProps[] = [
  {
    property: "channel",
    title: "Channels",
    heading: "Channel",
    label: (v: string) => channelNames[v] ?? v,
    detail: { property: "source", heading: "Source" },
  },
  { property: "source", title: "Sources", heading: "Source", detail: { property: "referrer", heading: "Referrer" } },
  { property: "utm_source", title: "UTM sources", heading: "utm_source" },
  { property: "utm_medium", title: "UTM mediums", heading: "utm_medium" },
  { property: "utm_campaign", title: "UTM campaigns", heading: "utm_campaign" },
].map((b) => ({
  ...b,
  measure: "unique_users",
  filters: [{ property: b.property, operator: "is_set" }],
  empty: b.property.startsWith("utm_") ? `No page view carried ${b.property} in this range.` : "No visit in this range.",
}));

/**
 * Acquisition shows where visitors came from (channels, sources and UTM
 * tags, from trends of $pageview broken down by the columns ingest fills
 * in), then the AI bot activity panel and the pages AI bots fetched most;
 * of live data or of test keys' (env). The channel and the source opened
 * are in the URL (?channel=, ?source=, docs/dashboard.md), each a new
 * history entry.
 */
export function Acquisition(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  const drill = {
    channel: useQueryState("channel", ""),
    source: useQueryState("source", ""),
  };
  if (!props.product) return <NoProduct />;
  const { from, to } = props.range;
  return (
    <section class="page">
      <h1>Acquisition</h1>
      <div class="grid-2">
        {sources.map((b) => {
          const opened = b.property === "channel" || b.property === "source" ? drill[b.property] : null;
          return (
            <BreakdownCard
              key={`${props.product!.id}/${b.property}`}
              product={props.product!.id}
              from={from}
              to={to}
              env={props.env}
              {...b}
              {...(opened ? { open: opened[0] || null, onOpen: (v: string | null) => opened[1](v ?? "") } : {})}
            />
          );
        })}
      </div>
      <BotsPanel key={props.product.id} product={props.product} range={props.range} env={props.env} />
    </section>
  );
}

function BotsPanel(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const [bots, retry] = useLoad<BotsResult>(
    () => api.bots(pid, { from: props.range.from, to: props.range.to }, props.env),
    [pid, props.range.from, props.range.to, props.env],
  );
  return (
    <>
      {bots.state === "loading" ? <Skeleton rows={4} label="Loading AI bot activity…" /> : null}
      {bots.state === "failed" ? <ErrorState message={bots.error} onRetry={retry} /> : null}
      {bots.state === "done" ? (
        <>
          <section class="card" aria-labelledby="bots-title">
            <h2 id="bots-title">AI bot activity</h2>
            {bots.data.bots.length === 0 ? (
              <div class="empty-state" data-testid="no-bots">
                <p>No AI bot fetched this product's pages {during(props.range)}.</p>
                <p class="muted">
                  Page views whose user agent is a known AI crawler or assistant (GPTBot, ClaudeBot, ChatGPT-User…) are counted here
                  instead of as visitors. The script tag sends them by itself; a server can <code>POST /e</code> with the visitor's user
                  agent.
                </p>
              </div>
            ) : (
              <Table
                label="AI bot activity"
                head={
                  <>
                    <th scope="col">Bot</th>
                    <th scope="col">Type</th>
                    <th scope="col">Hits</th>
                    <th scope="col">Last seen</th>
                  </>
                }
              >
                {bots.data.bots.map((b) => (
                  <tr key={b.name}>
                    <td>{b.name}</td>
                    <td>{botType(b.category, b.categoryLabel)}</td>
                    <td class="num">{num(b.hits)}</td>
                    <td>{when(b.lastSeen)}</td>
                  </tr>
                ))}
              </Table>
            )}
            {bots.data.allowlist ? (
              <p class="muted" data-testid="allowlist">
                Known AI bots: allowlist version {bots.data.allowlist.version}, reviewed {bots.data.allowlist.reviewed} (
                {bots.data.allowlist.bots} bots).
              </p>
            ) : null}
          </section>
          <section class="card" aria-labelledby="ai-pages-title">
            <h2 id="ai-pages-title">Top pages accessed by AI</h2>
            {bots.data.topPages.length === 0 ? (
              <p class="empty">No page was fetched by an AI bot in this range.</p>
            ) : (
              <Table
                label="Top pages accessed by AI"
                head={
                  <>
                    <th scope="col">Page</th>
                    <th scope="col">Hits</th>
                    <th scope="col">Bots</th>
                  </>
                }
              >
                {bots.data.topPages.map((p) => (
                  <tr key={p.url}>
                    <td class="url">{p.url}</td>
                    <td class="num">{num(p.hits)}</td>
                    <td class="num">{num(p.bots)}</td>
                  </tr>
                ))}
              </Table>
            )}
          </section>
        </>
      ) : null}
    </>
  );
}
