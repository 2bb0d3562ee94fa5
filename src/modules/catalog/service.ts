import type { Tx } from "../../platform/db/prisma.js";
import { notFound } from "../../platform/errors.js";
import { enqueueCatalogFlush } from "./sql.js";
import type { CatalogUpdated } from "./events.js";

export const FLUSH_CATALOG_TASK = "flush_catalog_changes";

/**
 * Records a catalog change for aggregation: changes inside CATALOG_EVENT_WINDOW_MS become
 * one catalog.updated per item and action. The flush job's key is per store and keeps its first run_at,
 * so the window starts at the first change and later changes join it.
 */
export async function recordCatalogChange(
  tx: Tx,
  storeId: string,
  itemType: CatalogUpdated["itemType"],
  itemId: string,
  action: CatalogUpdated["action"],
  windowMs: number,
): Promise<void> {
  await tx.catalogChange.create({ data: { storeId, itemType, itemId, action } });
  await tx.$executeRaw(enqueueCatalogFlush(FLUSH_CATALOG_TASK, storeId, windowMs));
}

/** Pauses or resumes a product (PATCH /catalog/products/{id}/status). */
export async function setProductActive(tx: Tx, storeId: string, productId: string, isActive: boolean, windowMs: number): Promise<{ id: string }> {
  const product = await tx.product.findFirst({ where: { id: productId, storeId }, select: { id: true, isActive: true } });
  if (!product) throw notFound("product", productId);
  if (product.isActive === isActive) return product;
  await tx.product.update({ where: { id: productId }, data: { isActive } });
  await recordCatalogChange(tx, storeId, "product", productId, isActive ? "product.activated" : "product.paused", windowMs);
  return product;
}
