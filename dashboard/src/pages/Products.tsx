import { useState } from "preact/hooks";
import { api, message } from "../api";
import { Link } from "../components/Link";
import { Table } from "../components/Table";
import { when } from "../format";
import { navigate } from "../router";
import { allows } from "../roles";
import type { Product, Role } from "../types";

/** Products is Settings → Products: every product, and a form to add one. */
export function Products(props: { products: Product[]; role: Role | null; onCreated: (p: Product) => void }) {
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await api.createProduct(name);
      setName("");
      props.onCreated(p);
      navigate(`/settings/products/${p.id}?product=${p.id}`);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="page">
      <p class="crumbs">
        Settings · <Link href="/settings/members">Members</Link>
      </p>
      <h1>Products</h1>
      <p class="muted">A product is the unit of data: each has its own API keys, query tokens and events.</p>
      <Table
        label="Products"
        head={
          <>
            <th>Name</th>
            <th>ID</th>
            <th>Created</th>
          </>
        }
      >
        {props.products.map((p) => (
          <tr key={p.id}>
            <td>
              <Link href={`/settings/products/${p.id}?product=${p.id}`}>{p.name}</Link>
            </td>
            <td>{p.id}</td>
            <td>{when(p.createdAt)}</td>
          </tr>
        ))}
      </Table>
      {/* Creating a product is an admin's (docs/security.md, "Roles"). */}
      {!allows(props.role, "admin") ? null : (
        <form class="card inline-form" onSubmit={create} aria-label="New product">
          <label>
            New product
            <input name="name" required maxLength={100} placeholder="Web shop" value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="button" disabled={busy}>
            Create product
          </button>
          {error ? (
            <p class="form-error" role="alert">
              {error}
            </p>
          ) : null}
        </form>
      )}
    </section>
  );
}
