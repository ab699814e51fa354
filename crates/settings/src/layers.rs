//! Where each setting comes from, most specific first: a flag, an environment variable, the
//! active provider, then the config file. [`crate::Settings::merge`] asks these in turn.

use tooltrail_protocol::{ToolMode, UnknownToolMode};

use crate::edit::Provider;
use crate::keychain::ProviderKeys;
use crate::{
    ConfigFile, DEFAULT_BASE_URL, LOCAL_PROVIDER_ID, LocalConfig, Overrides, SettingsError,
    check_base_url, check_context_window,
};

/// The endpoint questions go to, with the provider, the local runtime and the key that go
/// with it.
pub(crate) struct Endpoint {
    pub(crate) provider: Option<Provider>,
    pub(crate) local: Option<LocalConfig>,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
    /// Why the provider's key could not be read, when it could not.
    pub(crate) key_problem: Option<String>,
}

impl Endpoint {
    pub(crate) fn choose(
        overrides: &Overrides,
        file: &ConfigFile,
        env: &dyn Fn(&str) -> Option<String>,
        keys: &ProviderKeys<'_>,
    ) -> Result<Self, SettingsError> {
        let chosen = overrides.provider.as_deref();
        // A provider chosen for this run speaks for the endpoint whatever URL is given.
        let explicit_url = if chosen.is_some() {
            None
        } else {
            overrides
                .base_url
                .clone()
                .or_else(|| env("TOOLTRAIL_BASE_URL"))
        };
        // The active provider speaks for the endpoint unless a flag or variable names another;
        // its key goes only to its own endpoint.
        let provider = match chosen {
            Some(id) => chosen_provider(file, id)?,
            None => file.active().filter(|_| explicit_url.is_none()).cloned(),
        };
        // The built-in `local` provider: Tooltrail's own server, whose endpoint the runtime
        // gives once it runs. A user's own provider of that id is found by `active()` above.
        let local_asked = chosen.map_or(file.active_provider.as_deref(), Some);
        let local = (provider.is_none()
            && explicit_url.is_none()
            && local_asked == Some(LOCAL_PROVIDER_ID))
        .then(|| file.local.clone());
        if let Some(local) = &local {
            local.check()?;
        }
        let base_url = explicit_url
            .or_else(|| provider.as_ref().map(|p| p.base_url.clone()))
            .or_else(|| file.base_url.clone())
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        check_base_url(&base_url)?;
        let (provider_key, key_problem) = provider_key(provider.as_ref(), keys);
        let api_key = env("TOOLTRAIL_API_KEY")
            .or(provider_key)
            .or_else(|| file.api_key_env.as_deref().and_then(env));
        Ok(Self {
            provider,
            local,
            base_url,
            api_key,
            key_problem,
        })
    }
}

/// The provider `id` of config.toml; `None` for the built-in `local` one (unless the user has a
/// provider of that id).
fn chosen_provider(file: &ConfigFile, id: &str) -> Result<Option<Provider>, SettingsError> {
    if let Some(provider) = file.providers.iter().find(|p| p.id == id) {
        return Ok(Some(provider.clone()));
    }
    if id == LOCAL_PROVIDER_ID {
        return Ok(None);
    }
    let mut known: Vec<&str> = file.providers.iter().map(|p| p.id.as_str()).collect();
    known.push(LOCAL_PROVIDER_ID);
    Err(SettingsError::NoSuchProvider {
        id: id.to_string(),
        known: known.join(", "),
    })
}

/// The provider's key from the keychain; a keychain that fails sends none and says why.
fn provider_key(
    provider: Option<&Provider>,
    keys: &ProviderKeys<'_>,
) -> (Option<String>, Option<String>) {
    let Some(provider) = provider else {
        return (None, None);
    };
    match keys.get(&provider.id) {
        Ok(key) => (key, None),
        Err(error) => (
            None,
            Some(format!(
                "the API key of provider {:?} could not be read, so none is sent: {error}",
                provider.name
            )),
        ),
    }
}

/// The sources of the settings a provider may give for itself.
pub(crate) struct Layers<'a> {
    pub(crate) overrides: &'a Overrides,
    pub(crate) env: &'a dyn Fn(&str) -> Option<String>,
    pub(crate) provider: Option<&'a Provider>,
    pub(crate) file: &'a ConfigFile,
}

impl Layers<'_> {
    pub(crate) fn tool_mode(&self) -> Result<ToolMode, SettingsError> {
        if let Some(mode) = self.overrides.tool_mode {
            return Ok(mode);
        }
        match (self.env)("TOOLTRAIL_TOOL_MODE") {
            Some(word) => word.parse().map_err(|error: UnknownToolMode| {
                SettingsError::BadValue(format!("TOOLTRAIL_TOOL_MODE: {error}"))
            }),
            None => Ok(self
                .provider
                .and_then(|p| p.tool_mode)
                .or(self.file.tool_mode)
                .unwrap_or_default()),
        }
    }

    pub(crate) fn context_window(&self) -> Result<Option<u32>, SettingsError> {
        let context_window = match self.overrides.context_window {
            Some(tokens) => Some(tokens),
            None => match (self.env)("TOOLTRAIL_CONTEXT_WINDOW") {
                Some(word) => Some(word.trim().parse::<u32>().map_err(|_| {
                    SettingsError::BadValue(format!(
                        "TOOLTRAIL_CONTEXT_WINDOW: {word:?} is not a number of tokens"
                    ))
                })?),
                None => self
                    .provider
                    .and_then(|p| p.context_window)
                    .or(self.file.context_window),
            },
        };
        if let Some(tokens) = context_window {
            check_context_window(tokens)?;
        }
        Ok(context_window)
    }

    pub(crate) fn max_tokens(&self) -> Result<Option<u32>, SettingsError> {
        let max_tokens = self
            .provider
            .and_then(|p| p.max_tokens)
            .or(self.file.max_tokens);
        if max_tokens == Some(0) {
            return Err(SettingsError::BadValue(
                "max_tokens must be at least 1".to_string(),
            ));
        }
        Ok(max_tokens)
    }

    pub(crate) fn max_tokens_field(&self) -> Result<Option<String>, SettingsError> {
        let field = self
            .provider
            .and_then(|p| p.max_tokens_field.clone())
            .or(self.file.max_tokens_field.clone());
        if let Some(field) = &field
            && !matches!(field.as_str(), "max_tokens" | "max_completion_tokens")
        {
            return Err(SettingsError::BadValue(format!(
                "max_tokens_field must be \"max_tokens\" or \"max_completion_tokens\" ({field:?} was given)"
            )));
        }
        Ok(field)
    }

    pub(crate) fn vision(&self) -> Option<bool> {
        self.provider.and_then(|p| p.vision).or(self.file.vision)
    }

    /// A flag's or variable's model, else the active provider's, the local runtime's or the
    /// file's.
    pub(crate) fn model(&self, local: Option<&LocalConfig>) -> Option<String> {
        let file_model = match (self.provider, local) {
            (Some(provider), _) => provider.model.clone(),
            (None, Some(local)) => local.model.clone(),
            (None, None) => self.file.model.clone(),
        };
        self.overrides
            .model
            .clone()
            .or_else(|| (self.env)("TOOLTRAIL_MODEL"))
            .or(file_model)
    }
}
