// The start-up check's answer: when a newer version is out, a card at the top of the window
// offers it, over whatever screen is open and without taking the focus. The check is the
// backend's, made once per run and only when Settings → Updates leaves it on; when it fails
// (offline, a server down) nothing is shown, so nobody is nagged at every start. Not now hides
// the card until the next start; so does Esc, while the focus is in the card (elsewhere Esc
// keeps its meaning, such as stopping a question) and nothing is installing.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, type UpdateInfo } from "../../api";
import { useI18n } from "../../i18n";
import { useEscape } from "../useEscape";
import { UpdateOffer } from "./UpdateOffer";
import { useInstall } from "./useInstall";

export function UpdateNotice() {
  const { t } = useI18n();
  const [update, setUpdate] = useState<UpdateInfo | null>(null);
  const [hidden, setHidden] = useState(false);
  const install = useInstall();
  const card = useRef<HTMLElement>(null);
  const installing = useRef(false);
  useEffect(() => {
    installing.current = install.state.step === "installing";
  }, [install.state.step]);

  useEffect(() => {
    api.checkForUpdate(true).then(setUpdate, () => {});
  }, []);

  const hide = useCallback(() => setHidden(true), []);
  const passOn = useCallback((event: KeyboardEvent) => installing.current || !(event.target instanceof Node && card.current?.contains(event.target)), []);
  useEscape(hide, passOn);

  const shown = update !== null && !hidden;
  return (
    <>
      {/* Present from the start, so the offer is announced when it appears. */}
      <p className="sr-only" role="status">
        {shown ? t("updAvailable", { version: update.version }) : ""}
      </p>
      {shown && <UpdateOffer ref={card} update={update} install={install} onLater={hide} level={2} className="update-notice" />}
    </>
  );
}
