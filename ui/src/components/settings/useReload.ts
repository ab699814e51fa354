// What a settings screen shows from the backend: loaded when the screen opens (and again when
// `again` changes), and loaded again on demand after a change. A failed load keeps what was
// shown before and says why.
import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api";

export function useReload<T>(load: () => Promise<T>, again?: unknown) {
  const [value, setValue] = useState<T | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const loader = useRef(load);
  useEffect(() => {
    loader.current = load;
  });
  const reload = useCallback(
    () =>
      loader.current().then(
        (loaded) => {
          setValue(loaded);
          setLoadError(null);
        },
        (failure: unknown) => setLoadError(errorMessage(failure)),
      ),
    [],
  );
  useEffect(() => {
    void reload();
  }, [reload, again]);
  return { value, setValue, loadError, reload };
}
