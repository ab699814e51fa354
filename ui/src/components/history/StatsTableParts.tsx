// What the stats screen's two tables (calls per tool, tokens per day) have in common: the
// line that stands in for a table while it loads or after it failed, and a number column's head.
import type { ReactNode } from "react";
import { useI18n } from "../../i18n";
import type { KeyedLoad } from "./useKeyedLoad";

/** "Loading…" or why the load failed while `current` has no answer; else what `loaded` shows. */
export function StatsLoad({ current, loaded }: { current: KeyedLoad<unknown> | null; loaded: () => ReactNode }) {
  const { t } = useI18n();
  if (current === null) return <p className="muted">{t("histLoading")}</p>;
  if (current.error !== null) {
    return (
      <p className="turn-error" role="alert">
        {t("statsLoadFailed", { message: current.error })}
      </p>
    );
  }
  return loaded();
}

/** The head of a column of numbers, with what it counts on hover where that needs saying. */
export function NumHeader({ hint, children }: { hint?: string; children: ReactNode }) {
  return (
    <th scope="col" className="num" title={hint}>
      {children}
    </th>
  );
}
