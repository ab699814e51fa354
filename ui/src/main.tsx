import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { DownloadsProvider } from "./downloads";
import { I18nProvider } from "./i18n";
import "./perf";
import "./styles.css";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <I18nProvider>
        <DownloadsProvider>
          <App />
        </DownloadsProvider>
      </I18nProvider>
    </StrictMode>,
  );
}
