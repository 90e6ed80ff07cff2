import type { Product } from "../types";

/**
 * ProductSwitcher picks the product every page shows. With none current
 * (the URL names a product the user cannot see) it says so, rather than
 * seem to show the first.
 */
export function ProductSwitcher(props: { products: Product[]; current: number | null; onChange: (id: number) => void }) {
  return (
    <label class="switcher">
      <span class="label">Product</span>
      <select
        aria-label="Product"
        value={props.current ?? ""}
        onChange={(e) => props.onChange(Number((e.currentTarget as HTMLSelectElement).value))}
      >
        {props.current === null ? (
          <option value="" disabled>
            Choose a product
          </option>
        ) : null}
        {props.products.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}
