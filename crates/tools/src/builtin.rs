//! The built-in workspace tools. The first five keep the names and parameters prompts and
//! clients call them by (docs/requirements.md, "The built-in tools and their limits").

use std::sync::Arc;

use crate::tool::Tool;

mod ask_user;
mod code_query;
mod count_lines;
mod execute_bash;
mod file_write;
mod list_dir;
mod read_file;
mod search_files;
mod search_text;
mod snippets;

/// Every built-in tool, ready to register.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(search_files::SearchFiles::new()),
        Arc::new(read_file::ReadFile::new()),
        Arc::new(search_text::SearchText::new()),
        Arc::new(count_lines::CountLines::new()),
        Arc::new(execute_bash::ExecuteBash::new()),
        Arc::new(list_dir::ListDir::new()),
        Arc::new(code_query::CodeQuery::new()),
        Arc::new(snippets::Snippets::new()),
        Arc::new(file_write::FileWrite::new()),
        Arc::new(ask_user::AskUser::new()),
    ]
}

/// Built-in tools that stay off until the user turns them on (`enabled_tools` in
/// `config.toml`, Settings → tools, `--enable`): they change the workspace.
pub const OFF_BY_DEFAULT: &[&str] = &[file_write::NAME];
