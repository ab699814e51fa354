// The body of a comparison's table, list or waterfall alike: one row per aligned position, its
// number (and "parts here" on the row where the two part), then a cell for each side's call.
import type { ReactNode } from "react";
import type { ComparedCall } from "../../api";
import { useI18n } from "../../i18n";
import type { ComparedLine } from "./compare";

interface Props {
  lines: ComparedLine[];
  /** The test id each row carries. */
  rowTestId: string;
  /** A side's cell: its call, or `null` when that side has none at this row. */
  cell: (call: ComparedCall | null, side: "original" | "replay") => ReactNode;
}

export function AlignedRows({ lines, rowTestId, cell }: Props) {
  const { t } = useI18n();
  return (
    <tbody>
      {lines.length === 0 && (
        <tr>
          <td colSpan={3} className="muted">
            {t("replayNoCalls")}
          </td>
        </tr>
      )}
      {lines.map((line) => (
        <tr key={line.position} className={line.parts ? "replay-parts" : undefined} data-testid={rowTestId} data-parts={line.parts || undefined}>
          <th scope="row" className="replay-pos">
            {line.position}
            {line.parts && <span className="replay-parts-note">{t("replayPartsHere")}</span>}
          </th>
          {cell(line.original, "original")}
          {cell(line.replay, "replay")}
        </tr>
      ))}
    </tbody>
  );
}
