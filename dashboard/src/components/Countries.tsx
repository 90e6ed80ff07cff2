import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import type { DataEnv } from "../types";
import { BreakdownTable, type Detail } from "./BreakdownCard";

/** The names of countries by their ISO 3166-1 alpha-2 codes, in English. */
const regionNames = new Intl.DisplayNames(["en"], { type: "region" });

/**
 * countryName names a country by its code ("NL" is "Netherlands"); the
 * empty value, a client the database does not place, is "Unknown", and a
 * code Intl does not know is shown as it is.
 */
export function countryName(code: string): string {
  if (code === "" || code === "(none)") return "Unknown";
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** countryFlag is a country's flag emoji, from its two letters ("" for anything else). */
export function countryFlag(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return "";
  return String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

/**
 * A country opens its regions, and a region its cities. The database the
 * binary ships names countries only (docs/ingest.md, "Geography"): then
 * every region is empty, and the card says what would fill them.
 */
const regions: Detail = {
  property: "region",
  heading: "Region",
  none: "Regions and cities need a City database (--geoip-db).",
  detail: { property: "city", heading: "City" },
};

/**
 * useGeoAttribution says whether the countries come from the DB-IP database
 * the binary embeds, whose licence (CC BY 4.0) asks for its credit wherever
 * they are shown (docs/dependencies.md). A shared link's view cannot ask
 * the dashboard config, nor can a failed call say: then the credit is shown,
 * as one too many does no harm and one missing breaks the licence.
 */
function useGeoAttribution(readOnly: boolean): boolean {
  const [due, setDue] = useState(true);
  useEffect(() => {
    if (readOnly) return;
    let live = true;
    api.config().then(
      (c) => live && setDue(c.geoAttribution),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [readOnly]);
  return due;
}

/**
 * Countries is the Overview's card of visitors by country, most first, by
 * name and flag (issue 37, item 2). A country opens its regions and a
 * region its cities, below the row, as a source opens its referrers; the
 * country opened is the card's own. With the built-in database it credits
 * DB-IP, as its licence asks.
 */
export function Countries(props: { product: number; from: string; to: string; env: DataEnv; readOnly?: boolean }) {
  const credit = useGeoAttribution(!!props.readOnly);
  return (
    <section class="card" aria-label="Countries">
      <h2>Countries</h2>
      <BreakdownTable
        product={props.product}
        from={props.from}
        to={props.to}
        env={props.env}
        property="country"
        heading="Country"
        tableLabel="Countries"
        measure="unique_users"
        label={countryName}
        mark={countryFlag}
        detail={regions}
      />
      {credit ? (
        <p class="hint credit">
          <a href="https://db-ip.com">IP Geolocation by DB-IP</a>
        </p>
      ) : null}
    </section>
  );
}
