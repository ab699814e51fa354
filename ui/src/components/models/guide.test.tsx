import { render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type GuideView, type ModelsView } from "../../api";
import { I18nProvider, type Lang } from "../../i18n";
import { modelsEn, modelsZh } from "../../i18n/models";
import { ModelsSection } from "../settings/ModelsSection";
import { ModelGuide } from "./ModelGuide";

afterEach(() => vi.restoreAllMocks());

const guide: GuideView = {
  ready: false,
  problem: null,
  local: false,
  endpoint: { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: "C:\\Users\\me\\AppData\\Roaming\\tooltrail\\config.toml", problem: null, key_problem: null },
  servers: [],
  looked_ms: 3,
};

function models(runtime_supported: boolean): ModelsView {
  return {
    dir: "C:\\Users\\me\\AppData\\Local\\tooltrail\\models",
    local_model: null,
    local_active: false,
    installed: [],
    unfinished: [],
    catalogue: [{ name: "qwen3-1.7b", title: "Qwen3 1.7B", description: "Small and quick.", size_bytes: 1107409472, memory_gb: 2.6, context_length: 40960, licence: "Apache-2.0", installed: false }],
    runtime: null,
    server_problem: null,
    runtime_supported,
  };
}

async function shown(lang: Lang, runtime_supported: boolean) {
  vi.spyOn(api, "modelGuide").mockResolvedValue(guide);
  const listed = vi.spyOn(api, "listModels").mockResolvedValue(models(runtime_supported));
  render(
    <I18nProvider initial={lang}>
      <ModelGuide initial={guide} onDone={() => {}} doneLabel="guideAskNow" onChanged={() => {}} />
    </I18nProvider>,
  );
  await waitFor(() => expect(listed).toHaveBeenCalled());
  return screen.getByTestId("guide-local");
}

describe("the first-run guide's own model", () => {
  it("is offered for download where the backend can run it", async () => {
    const local = await shown("en", true);
    expect(await within(local).findByRole("button", { name: "Download and use Qwen3 1.7B" })).toBeInTheDocument();
    expect(within(local).queryByTestId("guide-local-unsupported")).toBeNull();
  });

  for (const [lang, strings] of [["en", modelsEn], ["zh", modelsZh]] as const) {
    it(`is not offered where the backend cannot run it, and the guide says why (${lang})`, async () => {
      const local = await shown(lang, false);
      expect(await within(local).findByTestId("guide-local-unsupported")).toHaveTextContent(strings.guideLocalUnsupported);
      expect(within(local).queryAllByRole("button")).toEqual([]);
      expect(within(local).queryByText("Qwen3 1.7B")).toBeNull();
    });
  }
});

describe("Settings → Models", () => {
  for (const [lang, strings] of [["en", modelsEn], ["zh", modelsZh]] as const) {
    it(`says before a download that this system cannot run the model itself (${lang})`, async () => {
      vi.spyOn(api, "listModels").mockResolvedValue(models(false));
      render(
        <I18nProvider initial={lang}>
          <ModelsSection onChanged={() => {}} />
        </I18nProvider>,
      );
      const catalogue = await screen.findByTestId("mdl-catalogue");
      const warning = screen.getByTestId("mdl-runtime-unsupported");
      expect(warning).toHaveTextContent(strings.mdlRuntimeUnsupported);
      // The sentence comes before the catalogue's download buttons.
      expect(warning.compareDocumentPosition(catalogue) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    });
  }

  it("says nothing of it where the runtime runs", async () => {
    vi.spyOn(api, "listModels").mockResolvedValue(models(true));
    render(
      <I18nProvider initial="en">
        <ModelsSection onChanged={() => {}} />
      </I18nProvider>,
    );
    await screen.findByTestId("mdl-catalogue");
    expect(screen.queryByTestId("mdl-runtime-unsupported")).toBeNull();
  });
});
