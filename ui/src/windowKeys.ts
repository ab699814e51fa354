// The window's own keys: Ctrl/⌘ + a key switches screens, and Esc stops the question running.
// Listened to in the bubbling phase, so a panel or a dialog that takes Esc first keeps it.
import { useEffect, useRef } from "react";
import type { Screen } from "./screen";

/** Ctrl/⌘ + key switches to a screen. */
const SCREEN_KEYS: Record<string, Screen> = { "1": "chat", "2": "history", "3": "stats", "4": "snippets", ",": "settings" };

/** `onScreen` must be stable (a state setter); `busy` and `stop` are read as they are at the key. */
export function useWindowKeys({ busy, stop }: { busy: boolean; stop: () => void }, onScreen: (screen: Screen) => void) {
  const escapeRef = useRef({ busy, stop });
  useEffect(() => {
    escapeRef.current = { busy, stop };
  });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey ? SCREEN_KEYS[event.key] : undefined;
      if (target) {
        event.preventDefault();
        onScreen(target);
        return;
      }
      if (event.key === "Escape" && escapeRef.current.busy) {
        event.preventDefault();
        escapeRef.current.stop();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onScreen]);
}
