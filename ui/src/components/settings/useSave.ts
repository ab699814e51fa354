// A settings form's Save: under way, done (until the form changes again), or failed with the
// message a user reads.
import { useState } from "react";
import { errorMessage } from "../../api";

export function useSave() {
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** Sends what `request` sends, and hands what was stored to `done` once it is. */
  const saveWith = <T>(request: () => Promise<T>, done: (stored: T) => void) => {
    setSaving(true);
    setError(null);
    request().then(
      (stored) => {
        setSaving(false);
        setSaved(true);
        done(stored);
      },
      (failure: unknown) => {
        setSaving(false);
        setError(errorMessage(failure));
      },
    );
  };
  /** The form changed since it was saved. */
  const changed = () => setSaved(false);
  return { saving, saved, error, saveWith, changed };
}
