// Strings of signing in to MCP servers (the sidebar, Settings → MCP, a timeline card), in both
// languages.
export const mcpSignInEn = {
  mcpSignInNeeded: "Needs sign-in",
  mcpSignIn: "Sign in",
  mcpSignInAgain: "Sign in again",
  mcpSignOut: "Sign out",
  mcpSignInWaiting: "Waiting for the browser…",
  mcpSignInWaitingHint: "Finish signing in in the browser that opened, or open this page:",
  mcpSignedInAs: "Signed in as {who}",
  mcpSignedIn: "Signed in",
  mcpSignInFailed: "Sign-in failed: {reason}",
  mcpCallNeedsSignIn: "{server} needs you to sign in before its tools can run.",
};

export const mcpSignInZh: Record<keyof typeof mcpSignInEn, string> = {
  mcpSignInNeeded: "需要登录",
  mcpSignIn: "登录",
  mcpSignInAgain: "重新登录",
  mcpSignOut: "退出登录",
  mcpSignInWaiting: "正在等待浏览器…",
  mcpSignInWaitingHint: "请在已打开的浏览器中完成登录，或打开此页面：",
  mcpSignedInAs: "已登录为 {who}",
  mcpSignedIn: "已登录",
  mcpSignInFailed: "登录失败：{reason}",
  mcpCallNeedsSignIn: "{server} 需要你先登录，才能运行它的工具。",
};
