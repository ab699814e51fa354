// Esc for what lies over the rest of the window (a full-size image, a call's panel). It is taken
// in the capture phase, before the window's own Esc (which stops a running turn), and kept from
// it: here Esc means what is on top.
import { useEffect } from "react";

/** `passOn`, where given, leaves an Esc to whatever else would take it. Keep both stable. */
export function useEscape(onEscape: () => void, passOn?: (event: KeyboardEvent) => boolean) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || passOn?.(event)) return;
      event.preventDefault();
      event.stopPropagation();
      onEscape();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [onEscape, passOn]);
}
