// A small app for the sourcemap tests: each function throws an error whose
// message is a marker the test finds in both this file and the build.
export class Cart {
  items: number[] = [];

  add(n: number): void {
    if (n < 0) throw new Error("marker-add");
    this.items.push(n);
  }

  total(): number {
    return this.items.reduce((sum, n) => {
      if (Number.isNaN(n)) throw new Error("marker-reduce");
      return sum + n;
    }, 0);
  }
}

export function checkout(cart: Cart): string {
  const total = cart.total();
  if (total > 1000) {
    throw new RangeError("marker-checkout");
  }
  return `paid ${total}`;
}

export async function load(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new TypeError("marker-load");
  return res.text();
}
