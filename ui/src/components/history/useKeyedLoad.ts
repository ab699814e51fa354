// What a screen loads for its current choices (`key`): the answer or the error for that key,
// or null while it loads. An answer for a key the screen has left is dropped.
import { useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api";

export interface KeyedLoad<T> {
  value: T | null;
  error: string | null;
}

export function useKeyedLoad<T>(key: string, load: (key: string) => Promise<T>): KeyedLoad<T> | null {
  const [loaded, setLoaded] = useState<KeyedLoad<T> & { key: string }>({ key: "", value: null, error: null });
  const loader = useRef(load);
  useEffect(() => {
    loader.current = load;
  });
  useEffect(() => {
    let gone = false;
    loader.current(key).then(
      (value) => !gone && setLoaded({ key, value, error: null }),
      (error: unknown) => !gone && setLoaded({ key, value: null, error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, [key]);
  return loaded.key === key ? loaded : null;
}
