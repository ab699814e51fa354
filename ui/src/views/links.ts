// A view's link as Tooltrail shows and opens it: a web address (http or https) without a user
// name or password, whose host is shown as it will be looked up (IDNA's ASCII form, so a
// look-alike Unicode name shows as the `xn--` name it is). The Rust side checks again before
// anything opens.

export type Link = { ok: true; href: string; host: string } | { ok: false; reason: "not_web" | "credentials" };

export function checkLink(text: string): Link {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: "not_web" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: "not_web" };
  // `https://bank.example@evil.example/` reads as the bank and opens the other site.
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials" };
  if (url.hostname === "") return { ok: false, reason: "not_web" };
  return { ok: true, href: url.href, host: url.host };
}
