// The list the composer opens on `@` (files and resources to attach) and `/` (prompts): groups
// of options, one of them active; the textarea keeps the focus and names the active option
// (aria-activedescendant), so typing goes on narrowing the list.
import type { ReactNode } from "react";

export interface PickerOption {
  id: string;
  label: string;
  detail?: string;
}

export interface PickerGroup {
  label: string;
  options: PickerOption[];
}

interface Props {
  id: string;
  label: string;
  groups: PickerGroup[];
  active: number;
  onChoose: (index: number) => void;
  /** Shown when no group has an option. */
  empty: ReactNode;
}

/** The id of the element of option `index` (counted across groups). */
export function optionId(listId: string, index: number): string {
  return `${listId}-option-${index}`;
}

export function Picker({ id, label, groups, active, onChoose, empty }: Props) {
  const filled = groups.filter((group) => group.options.length > 0);
  // Each group's first option's place in the whole list.
  const firsts = filled.map((_, at) => filled.slice(0, at).reduce((sum, group) => sum + group.options.length, 0));
  return (
    <div className="picker" data-testid="composer-picker">
      {filled.length === 0 ? (
        <p className="picker-empty muted">{empty}</p>
      ) : (
        <ul id={id} role="listbox" aria-label={label} className="picker-list">
          {filled.map((group, at) => (
            <li key={group.label} role="presentation">
              <div className="picker-group muted" aria-hidden="true">
                {group.label}
              </div>
              <ul role="group" aria-label={group.label}>
                {group.options.map((option, within) => {
                  const mine = (firsts[at] ?? 0) + within;
                  return (
                    <li
                      key={option.id}
                      id={optionId(id, mine)}
                      role="option"
                      aria-selected={mine === active}
                      className={mine === active ? "picker-option active" : "picker-option"}
                      // The textarea keeps the focus; a click chooses.
                      onMouseDown={(event) => event.preventDefault()}
                      onClick={() => onChoose(mine)}
                    >
                      <span className="picker-label">{option.label}</span>
                      {option.detail && <span className="picker-detail muted">{option.detail}</span>}
                    </li>
                  );
                })}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
