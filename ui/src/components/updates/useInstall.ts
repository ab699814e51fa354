// Installing the version found: one flow for the start-up notice and Settings → Updates. The
// backend downloads, checks the signature, installs and restarts the app; each step comes down
// the channel, and a refusal (a signature that does not match, a server that went away) comes
// back as a sentence, with nothing changed.
import { useCallback, useState } from "react";
import { api, errorCode, errorMessage, type UpdateProgress } from "../../api";
import { useI18n } from "../../i18n";

export type InstallState =
  | { step: "idle" }
  /** `progress`: the latest step the backend told, null until the first. */
  | { step: "installing"; progress: UpdateProgress | null }
  | { step: "failed"; message: string };

export interface Install {
  state: InstallState;
  start: () => void;
}

export function useInstall(): Install {
  const { t } = useI18n();
  const [state, setState] = useState<InstallState>({ step: "idle" });
  const start = useCallback(() => {
    setState({ step: "installing", progress: null });
    api
      .installUpdate((progress) => setState({ step: "installing", progress }))
      // The app restarts once installed, so an answer means it is about to.
      .then(
        () => setState({ step: "installing", progress: { kind: "restarting" } }),
        // A refused signature in the window's own language; other failures as the backend says.
        (failure: unknown) => setState({ step: "failed", message: errorCode(failure) === "signature" ? t("updSignatureRefused") : errorMessage(failure) }),
      );
  }, [t]);
  return { state, start };
}
