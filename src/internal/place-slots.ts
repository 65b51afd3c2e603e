/**
 * Writes values back into the argument object a field path was read from: what the bridge's wrapped
 * calls and the upload resolver's handle rewrite both do once their values are local. Only first-use
 * code imports it, so the root does not load it (issue 39).
 */
import type { FieldSlot } from "./field-paths.js";

/**
 * Puts values back where `slots` were found: a field's first value in its place, and a list item's
 * values spliced in at the item's position (later items move along). `valuesAt` gives the values
 * of each slot (`index` is the slot's position in `slots`).
 */
export function placeInSlots(
  slots: readonly FieldSlot[],
  valuesAt: (slot: FieldSlot, index: number) => readonly unknown[],
): void {
  const lists = new Map<unknown[], Map<number, readonly unknown[]>>();
  slots.forEach((slot, i) => {
    const values = valuesAt(slot, i);
    if (!Array.isArray(slot.container)) {
      (slot.container as Record<string, unknown>)[slot.key] = values[0];
      return;
    }
    const items = lists.get(slot.container) ?? new Map<number, readonly unknown[]>();
    items.set(slot.key as number, values);
    lists.set(slot.container, items);
  });
  for (const [list, items] of lists) {
    const next = list.flatMap((item, index) => items.get(index) ?? [item]);
    list.splice(0, list.length, ...next);
  }
}
