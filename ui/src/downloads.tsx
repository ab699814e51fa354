// The model downloads, held above every view: the backend runs them and broadcasts each step
// (`model-pull` events); this state folds them in, so the progress card is the same wherever
// the user goes and comes back to. A window that loads again asks where the running ones are.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { api, errorMessage, type PullUpdate } from "./api";
import { stopListening } from "./listening";

export interface Downloads {
  /** The downloads of this window's life, oldest first: running, and finished until dismissed. */
  items: PullUpdate[];
  /** Starts one; resolves with the model's name, or rejects with the sentence that says why not. */
  start: (reference: string, useAfter: boolean) => Promise<string>;
  cancel: (name: string) => void;
  dismiss: (name: string) => void;
  /** Increments when a download finishes, so lists of models load again. */
  finished: number;
}

const DownloadsContext = createContext<Downloads>({
  items: [],
  start: () => Promise.reject(new Error("no downloads here")),
  cancel: () => {},
  dismiss: () => {},
  finished: 0,
});

/** Whether an update is a download's last. */
export function isFinished(update: PullUpdate): boolean {
  switch (update.phase) {
    case "done":
    case "cancelled":
    case "failed":
      return true;
    case "checking":
    case "resuming":
    case "downloading":
    case "retrying":
    case "verifying":
      return false;
  }
}

function upsert(items: PullUpdate[], update: PullUpdate): PullUpdate[] {
  const at = items.findIndex((item) => item.name === update.name);
  if (at < 0) return [...items, update];
  // A late step of a download that already ended is not news.
  const old = items[at]!;
  if (isFinished(old) && !isFinished(update) && update.phase !== "checking") return items;
  const next = items.slice();
  next[at] = update;
  return next;
}

export function DownloadsProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<PullUpdate[]>([]);
  const [finished, setFinished] = useState(0);

  useEffect(() => {
    const stop = stopListening(
      api.onPull((update) => {
        setItems((old) => upsert(old, update));
        if (isFinished(update)) setFinished((n) => n + 1);
      }),
    );
    api.downloads().then((running) => setItems((old) => running.reduce(upsert, old)), () => {});
    return stop;
  }, []);

  const start = useCallback(async (reference: string, useAfter: boolean) => {
    try {
      return await api.pullModel(reference, useAfter);
    } catch (error) {
      throw new Error(errorMessage(error), { cause: error });
    }
  }, []);
  const cancel = useCallback((name: string) => {
    void api.cancelPull(name);
  }, []);
  const dismiss = useCallback((name: string) => setItems((old) => old.filter((item) => item.name !== name)), []);
  const value = useMemo(() => ({ items, start, cancel, dismiss, finished }), [items, start, cancel, dismiss, finished]);
  return <DownloadsContext.Provider value={value}>{children}</DownloadsContext.Provider>;
}

export function useDownloads(): Downloads {
  return useContext(DownloadsContext);
}
