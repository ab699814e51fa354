// Listening to the backend's events from an effect. Setting up a listener takes a round trip, so
// an effect can end before its listener exists: the listener is then stopped as soon as it does.
import type { UnlistenFn } from "@tauri-apps/api/event";

/** The effect's cleanup for `listening`. A listener that cannot be set up (outside the app, in
 * tests) is nothing to stop. */
export function stopListening(listening: Promise<UnlistenFn>): () => void {
  let gone = false;
  let stop: UnlistenFn | undefined;
  listening.then(
    (unlisten) => {
      if (gone) unlisten();
      else stop = unlisten;
    },
    () => {},
  );
  return () => {
    gone = true;
    stop?.();
  };
}
