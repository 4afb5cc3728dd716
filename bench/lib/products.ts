// Catalog items for the bulk figures: every one valid, so the client sends them all and the
// server creates them all (a mix of errors would measure the error path instead).

export interface BenchProduct {
  external_id: string;
  name: string;
  price: number;
  category: string;
  stores?: { store_id: string; stock_quantity: number }[];
}

export function product(i: number, storeId?: string): BenchProduct {
  const item: BenchProduct = {
    external_id: `SKU-${String(i).padStart(7, '0')}`,
    name: `Product ${i} — café torrado 500g`,
    price: 10 + (i % 1000) / 100,
    category: `category-${i % 50}`,
  };
  if (storeId) item.stores = [{ store_id: storeId, stock_quantity: (i % 200) + 0.5 }];
  return item;
}

export function products(count: number, storeId?: string): BenchProduct[] {
  return Array.from({ length: count }, (_, i) => product(i, storeId));
}

/** One item at a time, as a stream from an ERP export would arrive: nothing is held here. */
export async function* productStream(count: number): AsyncGenerator<BenchProduct> {
  for (let i = 0; i < count; i += 1) yield product(i);
}
