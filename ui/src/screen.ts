/**
 * The screens beside the sidebar; `guide` is choosing a model, offered when the endpoint could
 * not be reached. Its own module so that the sidebar, which switches between them, does not
 * import the app that renders it.
 */
export type Screen = "chat" | "history" | "stats" | "snippets" | "settings" | "guide";
