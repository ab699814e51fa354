// Installing the version found: one flow for the start-up notice and Settings → Updates. The
// backend downloads, checks the signature, installs and restarts the app; each step comes down
// the channel, and a refusal (a signature that does not match, a server that went away) comes
// back as a sentence, with nothing changed.
import { useCallback, useState } from "react";
import { api, errorMessage, type UpdateProgress } from "../../api";

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
  const [state, setState] = useState<InstallState>({ step: "idle" });
  const start = useCallback(() => {
    setState({ step: "installing", progress: null });
    api
      .installUpdate((progress) => setState({ step: "installing", progress }))
      // The app restarts once installed, so an answer means it is about to.
      .then(
        () => setState({ step: "installing", progress: { kind: "restarting" } }),
        (failure: unknown) => setState({ step: "failed", message: errorMessage(failure) }),
      );
  }, []);
  return { state, start };
}
