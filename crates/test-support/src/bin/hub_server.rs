//! `hub-server`: serves model files on loopback laid out like Hugging Face's hub, for trying
//! `tooltrail models pull` by hand with `HF_ENDPOINT` pointed at it.
//!
//! ```sh
//! cargo run -p tooltrail-test-support --bin hub-server -- \
//!     --file google/gemma-3-270m-GGUF=$HOME/.cache/tooltrail/gemma-3-270m-q4_k_m.gguf --redirect
//! HF_ENDPOINT=http://127.0.0.1:PORT tooltrail models pull hf.co/google/gemma-3-270m-GGUF/gemma-3-270m-q4_k_m.gguf
//! ```

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use tooltrail_test_support::hub::{HubFile, HubOptions, HubServer};

#[derive(Parser)]
#[command(about = "Serve model files on loopback as a Hugging Face-style hub.")]
struct Args {
    /// OWNER/REPO=PATH: serve the file at PATH as REPO's file of the same name; repeatable.
    #[arg(long = "file", value_name = "OWNER/REPO=PATH", required = true)]
    files: Vec<String>,
    /// The loopback port [default: any free one].
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Answer with a redirect to a content URL, as the real hub does.
    #[arg(long)]
    redirect: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut files = Vec::new();
    for spec in &args.files {
        let (repo, path) = spec
            .split_once('=')
            .with_context(|| format!("{spec:?} is not OWNER/REPO=PATH"))?;
        let path = PathBuf::from(path);
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .with_context(|| format!("{} has no file name", path.display()))?
            .to_string();
        files.push(HubFile::path(repo, &name, path));
    }
    let options = HubOptions {
        port: args.port,
        redirect: args.redirect,
        ..HubOptions::default()
    };
    let hub = HubServer::start(files.clone(), options).await?;
    println!("{}", hub.endpoint());
    for file in &files {
        let sha = hub.sha256(&file.repo, &file.file).unwrap_or_default();
        println!("hf.co/{}/{}  sha256 {sha}", file.repo, file.file);
    }
    tokio::signal::ctrl_c().await?;
    Ok(())
}
