// The calls whose view is open now, oldest first, so the timeline keeps their cards mounted while
// they scroll out of sight (a card that unmounts tears its view down).
import { useSyncExternalStore } from "react";

let open: string[] = [];
const listeners = new Set<() => void>();

function changed(next: string[]) {
  open = next;
  for (const listener of listeners) listener();
}

export function viewOpened(callId: string) {
  changed([...open.filter((id) => id !== callId), callId]);
}

export function viewGone(callId: string) {
  if (open.includes(callId)) changed(open.filter((id) => id !== callId));
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useOpenViews(): string[] {
  return useSyncExternalStore(subscribe, () => open);
}
