// The MCP servers of mcp.json: how each is launched and how it runs now, and a form to add,
// change or remove one. Changes apply from the next question.
import { useCallback, useEffect, useState } from "react";
import { api, errorMessage, type McpApproval, type McpConfigView, type McpOverview, type McpServerView } from "../../api";
import { McpSignIn, signInAsked } from "../McpSignIn";
import { useI18n, type Translate } from "../../i18n";
import { stopListening } from "../../listening";
import type { MessageKey } from "../../i18n/en";
import { ConfirmInline, Failure, Field, Notice, NotSaved, Switch } from "./Field";
import { EMPTY_MCP_FORM, mcpFormFrom, mcpLaunchLine, mergeMcp, validateMcp, type McpForm, type McpRow } from "./forms";

interface Props {
  /** A server was added, changed or removed. */
  onChanged: () => void;
}

const APPROVALS: { value: McpApproval; label: MessageKey }[] = [
  { value: "allow", label: "cfgApprovalAllow" },
  { value: "ask", label: "cfgApprovalAsk" },
  { value: "never", label: "cfgApprovalNever" },
];

function stateText(t: Translate, row: McpRow): { text: string; tone: string } {
  const live: McpServerView | undefined = row.live;
  if (row.config.disabled) return { text: t("mcpDisabled"), tone: "muted" };
  switch (live?.state) {
    case "running":
      return { text: live.tools === 1 ? t("mcpRunningOne") : t("mcpRunning", { count: live.tools }), tone: "ok" };
    case "failed":
      return { text: t("mcpFailed"), tone: "err" };
    case "disabled":
      return { text: t("mcpDisabled"), tone: "muted" };
    case "stopped":
      return { text: t("mcpStopped"), tone: "muted" };
    case "idle":
    case undefined:
      return { text: t("mcpIdle"), tone: "muted" };
  }
}

/** One server of mcp.json: its state now, how its calls are approved, how it starts, its sign-in
 * and what it wrote to stderr, with Edit and Remove (after a yes). */
function McpServerItem({
  row,
  broken,
  confirming,
  removing,
  onEdit,
  onAskRemove,
  onRemove,
  onCancelRemove,
}: {
  row: McpRow;
  /** mcp.json cannot be read, so no server can be edited. */
  broken: boolean;
  confirming: boolean;
  removing: boolean;
  onEdit: () => void;
  onAskRemove: () => void;
  onRemove: () => void;
  onCancelRemove: () => void;
}) {
  const { t } = useI18n();
  const { name } = row.config;
  const state = stateText(t, row);
  const stderr = row.live?.stderr ?? [];
  return (
    <li className="cfg-item" data-server={name}>
      <div className="cfg-item-main">
        <div className="cfg-item-title">
          <strong>{name}</strong>
          <span className={`cfg-badge cfg-badge-${state.tone}`} data-testid="cfg-mcp-state">
            {state.text}
          </span>
          <span className="muted small-text">{t("cfgMcpApprovalIs", { approval: t(APPROVALS.find((a) => a.value === row.config.approval)?.label ?? "cfgApprovalAsk") })}</span>
        </div>
        <code className="cfg-mono cfg-command">{mcpLaunchLine(row.config)}</code>
        {row.live?.error && !signInAsked(row.live) && <p className="small-text mcp-error">{row.live.error}</p>}
        {row.live && <McpSignIn server={row.live} signOut />}
        {stderr.length > 0 && (
          <details className="cfg-stderr">
            <summary className="small-text">{t("cfgMcpStderr", { count: stderr.length })}</summary>
            <pre className="card-pre">{stderr.join("\n")}</pre>
          </details>
        )}
      </div>
      <div className="cfg-item-actions">
        {confirming ? (
          <ConfirmInline question={t("cfgMcpRemoveQuestion", { name })} confirmLabel={t("cfgRemove")} busy={removing} onConfirm={onRemove} onCancel={onCancelRemove} />
        ) : (
          <>
            <button type="button" className="small" disabled={broken} onClick={onEdit} aria-label={t("cfgEditNamed", { name })}>
              {t("cfgEdit")}
            </button>
            <button type="button" className="small danger" onClick={onAskRemove} aria-label={t("cfgRemoveNamed", { name })}>
              {t("cfgRemove")}
            </button>
          </>
        )}
      </div>
    </li>
  );
}

export function McpSection({ onChanged }: Props) {
  const { t } = useI18n();
  const [config, setConfig] = useState<McpConfigView | null>(null);
  const [live, setLive] = useState<McpOverview>({ servers: [] });
  const [loadError, setLoadError] = useState<string | null>(null);
  /** The form, and the name of the server it edits (null: a new one). */
  const [editing, setEditing] = useState<{ form: McpForm; previous: string | null } | null>(null);
  const [submitted, setSubmitted] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [confirmRemove, setConfirmRemove] = useState<string | null>(null);
  const [removing, setRemoving] = useState(false);
  const [removeError, setRemoveError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const refreshLive = useCallback(() => {
    api.mcpServers().then(setLive, () => {});
  }, []);
  const reload = useCallback(() => {
    refreshLive();
    return api.mcpConfig().then(
      (loaded) => {
        setConfig(loaded);
        setLoadError(null);
      },
      (failure: unknown) => setLoadError(errorMessage(failure)),
    );
  }, [refreshLive]);

  useEffect(() => {
    void reload();
    return stopListening(api.onMcpChanged(refreshLive));
  }, [reload, refreshLive]);

  const broken = config?.problem ?? null;
  const rows = config ? mergeMcp(config.servers, live.servers) : [];
  const otherNames = rows.map((row) => row.config.name).filter((name) => name !== editing?.previous);
  const { problems, server } = editing ? validateMcp(editing.form, otherNames) : { problems: {}, server: null };
  const shown = (field: keyof typeof problems) => (submitted ? problems[field] : null);

  const openForm = (form: McpForm, previous: string | null) => {
    setEditing({ form, previous });
    setSubmitted(false);
    setSaveError(null);
    setNotice(null);
  };
  const update = (change: Partial<McpForm>) => setEditing((old) => (old ? { ...old, form: { ...old.form, ...change } } : old));
  const updateTool = (index: number, change: Partial<McpForm["tools"][number]>) =>
    update({ tools: (editing?.form.tools ?? []).map((row, i) => (i === index ? { ...row, ...change } : row)) });
  const updateToolTimeout = (index: number, change: Partial<McpForm["toolTimeouts"][number]>) =>
    update({ toolTimeouts: (editing?.form.toolTimeouts ?? []).map((row, i) => (i === index ? { ...row, ...change } : row)) });

  const save = () => {
    if (!editing) return;
    setSubmitted(true);
    if (!server || broken) return;
    setSaving(true);
    setSaveError(null);
    api.saveMcpServer(editing.previous, server).then(
      async () => {
        setSaving(false);
        setEditing(null);
        setNotice(t("cfgMcpSaved", { name: server.name }));
        await reload();
        onChanged();
      },
      (failure: unknown) => {
        setSaving(false);
        setSaveError(errorMessage(failure));
      },
    );
  };

  const remove = (name: string) => {
    setRemoving(true);
    setRemoveError(null);
    setNotice(null);
    api.removeMcpServer(name).then(
      async () => {
        setRemoving(false);
        setConfirmRemove(null);
        if (editing?.previous === name) setEditing(null);
        setNotice(t("cfgMcpRemoved", { name }));
        await reload();
        onChanged();
      },
      (failure: unknown) => {
        setRemoving(false);
        setRemoveError(errorMessage(failure));
      },
    );
  };

  if (loadError) return <p className="turn-error">{t("cfgLoadFailed", { message: loadError })}</p>;
  if (!config) return <p className="muted">{t("cfgLoading")}</p>;
  const form = editing?.form;
  return (
    <>
      <p className="muted small-text">{t("cfgMcpFile", { path: config.path })}</p>
      {broken && (
        <div className="turn-error cfg-block" role="alert" data-testid="cfg-mcp-problem">
          <strong>{t("cfgMcpBroken")}</strong> {broken}
        </div>
      )}
      {rows.length === 0 ? (
        <p className="muted">{t("cfgNoMcp")}</p>
      ) : (
        <ul className="cfg-list" aria-label={t("cfgMcp")}>
          {rows.map((row) => (
            <McpServerItem
              key={row.config.name}
              row={row}
              broken={broken !== null}
              confirming={confirmRemove === row.config.name}
              removing={removing}
              onEdit={() => openForm(mcpFormFrom(row.config), row.config.name)}
              onAskRemove={() => setConfirmRemove(row.config.name)}
              onRemove={() => remove(row.config.name)}
              onCancelRemove={() => setConfirmRemove(null)}
            />
          ))}
        </ul>
      )}
      <Failure message={removeError} />
      <Notice message={notice} />
      {!editing && (
        <div>
          <button type="button" disabled={broken !== null} onClick={() => openForm(EMPTY_MCP_FORM, null)}>
            + {t("cfgMcpAdd")}
          </button>
        </div>
      )}

      {editing && form && (
        <form
          className="cfg-form"
          aria-label={editing.previous ? t("cfgMcpEdit", { name: editing.previous }) : t("cfgMcpNew")}
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
          onKeyDown={(event) => {
            if (event.key === "Escape") {
              event.stopPropagation();
              setEditing(null);
            }
          }}
        >
          <h3>{editing.previous ? t("cfgMcpEdit", { name: editing.previous }) : t("cfgMcpNew")}</h3>
          <div className="cfg-grid">
            <Field label={t("cfgName")} hint={t("cfgMcpNameHint")} problem={shown("name")}>
              {(control) => <input {...control} value={form.name} onChange={(e) => update({ name: e.target.value })} autoComplete="off" spellCheck={false} autoFocus />}
            </Field>
            <fieldset className="cfg-field cfg-radios">
              <legend className="cfg-label">{t("cfgMcpTransport")}</legend>
              <label>
                <input type="radio" name="cfg-mcp-transport" checked={form.transport === "command"} onChange={() => update({ transport: "command" })} /> {t("cfgMcpCommandKind")}
              </label>
              <label>
                <input type="radio" name="cfg-mcp-transport" checked={form.transport === "url"} onChange={() => update({ transport: "url" })} /> {t("cfgMcpUrlKind")}
              </label>
            </fieldset>
            {form.transport === "command" ? (
              <>
                <Field label={t("cfgMcpCommand")} hint={t("cfgMcpCommandHint")} problem={shown("command")}>
                  {(control) => <input {...control} className="cfg-mono" value={form.command} placeholder="npx" onChange={(e) => update({ command: e.target.value })} autoComplete="off" spellCheck={false} />}
                </Field>
                <Field label={t("cfgMcpArgs")} hint={t("cfgMcpArgsHint")}>
                  {(control) => (
                    <textarea {...control} className="cfg-mono" rows={3} value={form.args} placeholder={"-y\n@modelcontextprotocol/server-filesystem\n."} onChange={(e) => update({ args: e.target.value })} spellCheck={false} />
                  )}
                </Field>
                <Field label={t("cfgMcpEnv")} hint={t("cfgMcpEnvHint")} problem={shown("env")}>
                  {(control) => <textarea {...control} className="cfg-mono" rows={3} value={form.env} placeholder={"DEBUG=1\nTOKEN=${MY_TOKEN}"} onChange={(e) => update({ env: e.target.value })} spellCheck={false} />}
                </Field>
                <Field label={t("cfgMcpCwd")} hint={t("cfgMcpCwdHint")}>
                  {(control) => <input {...control} className="cfg-mono" value={form.cwd} onChange={(e) => update({ cwd: e.target.value })} autoComplete="off" spellCheck={false} />}
                </Field>
              </>
            ) : (
              <Field label={t("cfgMcpUrl")} hint={t("cfgMcpUrlHint")} problem={shown("url")}>
                {(control) => <input {...control} type="url" className="cfg-mono" value={form.url} placeholder="https://example.com/mcp" onChange={(e) => update({ url: e.target.value })} autoComplete="off" spellCheck={false} />}
              </Field>
            )}
            <Field label={t("cfgMcpApproval")} hint={t("cfgMcpApprovalHint")}>
              {(control) => (
                <select {...control} value={form.approval} onChange={(e) => update({ approval: e.target.value as McpApproval })}>
                  {APPROVALS.map((a) => (
                    <option key={a.value} value={a.value}>
                      {t(a.label)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label={t("cfgMcpTimeout")} hint={t("cfgMcpTimeoutHint")} problem={shown("timeout_secs")}>
              {(control) => (
                <div className="cfg-unit-row">
                  <input {...control} type="number" min={1} step={1} inputMode="numeric" value={form.timeout_secs} onChange={(e) => update({ timeout_secs: e.target.value })} />
                  <span className="muted">{t("cfgUnitSeconds")}</span>
                </div>
              )}
            </Field>
            <Switch className="cfg-switch-field" checked={form.enabled} onChange={(enabled) => update({ enabled })}>
              <span>{t("cfgMcpEnabled")}</span>
            </Switch>
          </div>

          <fieldset className="cfg-tool-rules">
            <legend className="cfg-label">{t("cfgMcpToolRules")}</legend>
            <p className="cfg-hint">{t("cfgMcpToolRulesHint")}</p>
            {form.tools.map((row, index) => (
              <div key={index} className="cfg-tool-rule">
                <input
                  className="cfg-mono"
                  value={row.tool}
                  placeholder={t("cfgMcpToolName")}
                  aria-label={t("cfgMcpToolNameN", { n: index + 1 })}
                  onChange={(e) => updateTool(index, { tool: e.target.value })}
                  autoComplete="off"
                  spellCheck={false}
                />
                <select value={row.approval} aria-label={t("cfgMcpToolApprovalN", { n: index + 1 })} onChange={(e) => updateTool(index, { approval: e.target.value as McpApproval })}>
                  {APPROVALS.map((a) => (
                    <option key={a.value} value={a.value}>
                      {t(a.label)}
                    </option>
                  ))}
                </select>
                <button type="button" className="small" onClick={() => update({ tools: form.tools.filter((_, i) => i !== index) })} aria-label={t("cfgMcpToolRemoveN", { n: index + 1 })}>
                  {t("cfgRemove")}
                </button>
              </div>
            ))}
            {submitted && problems.tools && <span className="cfg-problem">{t(problems.tools.key, problems.tools.vars)}</span>}
            <div>
              <button type="button" className="small" onClick={() => update({ tools: [...form.tools, { tool: "", approval: "never" }] })}>
                + {t("cfgMcpToolAdd")}
              </button>
            </div>
          </fieldset>

          <fieldset className="cfg-tool-rules">
            <legend className="cfg-label">{t("cfgMcpToolTimeouts")}</legend>
            <p className="cfg-hint">{t("cfgMcpToolTimeoutsHint")}</p>
            {form.toolTimeouts.map((row, index) => (
              <div key={index} className="cfg-tool-rule">
                <input
                  className="cfg-mono"
                  value={row.tool}
                  placeholder={t("cfgMcpToolName")}
                  aria-label={t("cfgMcpToolTimeoutToolN", { n: index + 1 })}
                  onChange={(e) => updateToolTimeout(index, { tool: e.target.value })}
                  autoComplete="off"
                  spellCheck={false}
                />
                <span className="cfg-unit-row">
                  <input
                    type="number"
                    min={1}
                    step={1}
                    inputMode="numeric"
                    value={row.secs}
                    aria-label={t("cfgMcpToolTimeoutN", { n: index + 1 })}
                    onChange={(e) => updateToolTimeout(index, { secs: e.target.value })}
                  />
                  <span className="muted">{t("cfgUnitSeconds")}</span>
                </span>
                <button type="button" className="small" onClick={() => update({ toolTimeouts: form.toolTimeouts.filter((_, i) => i !== index) })} aria-label={t("cfgMcpToolTimeoutRemoveN", { n: index + 1 })}>
                  {t("cfgRemove")}
                </button>
              </div>
            ))}
            {submitted && problems.toolTimeouts && <span className="cfg-problem">{t(problems.toolTimeouts.key, problems.toolTimeouts.vars)}</span>}
            <div>
              <button type="button" className="small" onClick={() => update({ toolTimeouts: [...form.toolTimeouts, { tool: "", secs: "3600" }] })}>
                + {t("cfgMcpToolTimeoutAdd")}
              </button>
            </div>
          </fieldset>

          <NotSaved error={saveError} />
          <div className="cfg-actions">
            <button type="submit" className="primary" disabled={saving || broken !== null}>
              {t("cfgSave")}
            </button>
            <button type="button" disabled={saving} onClick={() => setEditing(null)}>
              {t("cancel")}
            </button>
            <span className="muted small-text">{t("cfgMcpNextQuestion")}</span>
          </div>
        </form>
      )}
    </>
  );
}
