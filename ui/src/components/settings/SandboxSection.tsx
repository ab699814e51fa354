// Whether the OS confines the commands the model runs, how, what a command sees (and why),
// the extra folders commands may read, and the commands that get the network once approved.
import { useEffect, useState } from "react";
import { api, errorMessage, type SandboxView } from "../../api";
import type { SandboxFolder } from "../../bindings";
import { useI18n } from "../../i18n";
import type { MessageKey } from "../../i18n/en";
import { useSave } from "./useSave";

const KIND_LABEL: Record<string, MessageKey> = {
  workspace: "cfgSandboxKindWorkspace",
  temp: "cfgSandboxKindTemp",
  cache: "cfgSandboxKindCache",
  toolchain: "cfgSandboxKindToolchain",
  extra: "cfgSandboxKindExtra",
  processes: "cfgSandboxKindProcesses",
  system: "cfgSandboxKindSystem",
  device: "cfgSandboxKindDevice",
};

/** System folders and devices are many and alike: they fold away. */
function isSystem(folder: SandboxFolder): boolean {
  return folder.kind === "system" || folder.kind === "device";
}

function FolderRow({ folder }: { folder: SandboxFolder }) {
  const { t } = useI18n();
  const label = KIND_LABEL[folder.kind];
  // The toolchain's name follows "toolchain: " in the backend's reason.
  const name = folder.reason.replace(/^toolchain: /, "");
  return (
    <li className="cfg-sandbox-folder" data-testid="cfg-sandbox-folder">
      <span className={`cfg-badge ${folder.access === "write" ? "cfg-badge-accent" : "cfg-badge-muted"}`}>
        {folder.access === "write" ? t("cfgSandboxWrite") : t("cfgSandboxRead")}
      </span>
      <code className="cfg-command">{folder.path}</code>
      <span className="cfg-hint">{label ? t(label, { name }) : folder.reason}</span>
    </li>
  );
}

/** A list kept in `[sandbox]` of config.toml, one entry a line, saved as a whole. */
function LinesForm({
  saved: savedLines,
  label,
  hint,
  savedNote,
  placeholder,
  testId,
  save: store,
  children,
}: {
  saved: string[];
  label: string;
  hint: string;
  savedNote: string;
  placeholder: string;
  testId: string;
  save: (lines: string[]) => Promise<string[]>;
  children?: React.ReactNode;
}) {
  const { t } = useI18n();
  const [text, setText] = useState(() => savedLines.join("\n"));
  const { saving, saved, error, saveWith, changed } = useSave();
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const unchanged = lines.join("\n") === savedLines.join("\n");

  const save = () =>
    saveWith(
      () => store(lines),
      (now) => setText(now.join("\n")),
    );

  return (
    <form
      className="cfg-form cfg-form-plain"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <label className="cfg-field">
        <span className="cfg-label">{label}</span>
        <textarea
          rows={3}
          spellCheck={false}
          value={text}
          placeholder={placeholder}
          data-testid={testId}
          onChange={(event) => {
            setText(event.target.value);
            changed();
          }}
        />
        <span className="cfg-hint">{hint}</span>
      </label>
      {children}
      {error && <p className="turn-error">{error}</p>}
      {saved && !error && <p className="muted small-text">{savedNote}</p>}
      <div className="cfg-actions">
        <button type="submit" disabled={saving || unchanged}>
          {t("cfgSave")}
        </button>
      </div>
    </form>
  );
}

function ExtraFolders({ status, onSaved }: { status: SandboxView; onSaved: (view: SandboxView) => void }) {
  const { t } = useI18n();
  return (
    <LinesForm
      saved={status.read_only_folders}
      label={t("cfgSandboxExtra")}
      hint={t("cfgSandboxExtraHint")}
      savedNote={t("cfgSandboxExtraSaved")}
      placeholder="~/notes"
      testId="cfg-sandbox-extra"
      save={(folders) =>
        api.saveReadOnlyFolders(folders).then((view) => {
          onSaved(view);
          return view.read_only_folders;
        })
      }
    >
      {status.skipped.map((line) => (
        <p key={line} className="turn-error">
          {line}
        </p>
      ))}
    </LinesForm>
  );
}

function NetworkCommands({ status, onSaved }: { status: SandboxView; onSaved: (view: SandboxView) => void }) {
  const { t } = useI18n();
  return (
    <LinesForm
      saved={status.network_commands}
      label={t("cfgSandboxNetwork")}
      hint={t("cfgSandboxNetworkHint")}
      savedNote={t("cfgSandboxNetworkSaved")}
      placeholder="npm install"
      testId="cfg-sandbox-network"
      save={(commands) =>
        api.saveNetworkCommands(commands).then((view) => {
          onSaved(view);
          return view.network_commands;
        })
      }
    />
  );
}

export function SandboxSection() {
  const { t } = useI18n();
  const [status, setStatus] = useState<SandboxView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let gone = false;
    api.sandboxStatus().then(
      (answer) => {
        if (!gone) setStatus(answer);
      },
      (failure: unknown) => {
        if (!gone) setError(errorMessage(failure));
      },
    );
    return () => {
      gone = true;
    };
  }, []);

  if (error) return <p className="turn-error">{t("cfgLoadFailed", { message: error })}</p>;
  if (!status) return <p className="muted">{t("cfgLoading")}</p>;
  const own = status.folders.filter((folder) => !isSystem(folder));
  const system = status.folders.filter(isSystem);
  return (
    <div className="cfg-sandbox-section">
      <div className={`cfg-sandbox ${status.enforced ? "cfg-sandbox-on" : "cfg-sandbox-off"}`} data-testid="cfg-sandbox">
        <div className="cfg-item-title">
          <span className={`cfg-badge ${status.enforced ? "cfg-badge-ok" : "cfg-badge-err"}`}>{status.enforced ? t("cfgSandboxEnforced") : t("cfgSandboxNotEnforced")}</span>
          <span>{status.summary}</span>
        </div>
        <p className="muted small-text">{status.enforced ? t("cfgSandboxOnHint") : t("cfgSandboxOffHint")}</p>
        {status.details.length > 0 && (
          <ul className="cfg-details">
            {status.details.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        )}
      </div>
      <h3 className="cfg-subtitle">{t("cfgSandboxSees")}</h3>
      <p className="cfg-hint">{t("cfgSandboxSeesHint")}</p>
      <ul className="cfg-list cfg-sandbox-folders">
        {own.map((folder) => (
          <FolderRow key={`${folder.kind}:${folder.path}`} folder={folder} />
        ))}
      </ul>
      {system.length > 0 && (
        <details className="cfg-sandbox-system">
          <summary>{t("cfgSandboxSystemFolders", { count: system.length })}</summary>
          <ul className="cfg-list cfg-sandbox-folders">
            {system.map((folder) => (
              <FolderRow key={`${folder.kind}:${folder.path}`} folder={folder} />
            ))}
          </ul>
        </details>
      )}
      <h3 className="cfg-subtitle">{t("cfgSandboxHidden")}</h3>
      {status.hidden.length === 0 ? (
        <p className="cfg-hint">{t("cfgSandboxHiddenNone")}</p>
      ) : (
        <ul className="cfg-list" data-testid="cfg-sandbox-hidden">
          {status.hidden.map((secret) => (
            <li key={secret.path} className="cfg-sandbox-folder">
              <code className="cfg-command">{secret.path}</code>
              <span className="cfg-hint">{secret.what}</span>
            </li>
          ))}
        </ul>
      )}
      <ExtraFolders status={status} onSaved={setStatus} />
      <NetworkCommands status={status} onSaved={setStatus} />
    </div>
  );
}
