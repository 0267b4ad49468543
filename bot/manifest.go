package bot

import (
	"fmt"
	"slices"

	"github.com/slack-go/slack"
	"gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/conversation"
)

// BotScopes are the OAuth bot token scopes threadwright needs, each for a method or
// event it uses (https://api.slack.com/scopes).
var BotScopes = []string{
	"app_mentions:read", // app_mention events
	"channels:history",  // message.channels events, conversations.replies in public channels
	"groups:history",    // the same in private channels
	"im:history",        // message.im events: direct messages
	"mpim:history",      // message.mpim events: group direct messages
	"chat:write",        // chat.postMessage, chat.update, chat.postEphemeral, assistant.threads.setStatus
	"reactions:write",   // reactions.add / reactions.remove (the "working" fallback)
	"users:read",        // users.info (with include_locale: the user's language)
	"commands",          // the /threadwright slash command and the message shortcut
	"files:write",       // files.getUploadURLExternal / completeUploadExternal (reports)
	"files:read",        // url_private of the files people attach (docs/architecture.md, "Files")
	"assistant:write",   // assistant.threads.setSuggestedPrompts, setTitle (and setStatus in assistant threads); agents.sessions.setStatus, rename
}

// AgentScopes are the scopes the agent view adds to BotScopes (docs/tools.md, "Agent
// view"): what the person views is read with them.
var AgentScopes = []string{
	"channels:read", // conversations.info: the viewed channel's name, purpose and whether the bot is a member
	"groups:read",   // the same for private channels
	// files:read (BotScopes) also gives files.info: the names of the viewed canvases
	// and lists.
}

// BotEvents are the bot events the app subscribes to in the assistant view:
// assistant_thread_started and assistant_thread_context_changed are its
// (docs/tools.md, "Assistant view"); its messages come as message.im.
var BotEvents = []string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim",
	"assistant_thread_started", "assistant_thread_context_changed"}

// AgentEvents are the bot events the app subscribes to in the agent view
// (docs/tools.md, "Agent view"): the Messages tab opened (app_home_opened), what the
// person views (app_context_changed), and the person's Stop and rename of an agent
// session (agent_session_stopped, agent_session_title_changed).
var AgentEvents = []string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim",
	"app_home_opened", "app_context_changed", "agent_session_stopped", "agent_session_title_changed"}

// Surface is where a person talks to the app in its own space (AGENT_SURFACE).
type Surface string

// The surfaces. SurfaceAgent is Slack's advice for new apps
// (https://docs.slack.dev/ai/migrating-to-agent-messaging: new apps can only use
// agent_view, and assistant_view "will eventually be deprecated").
const (
	SurfaceAgent     Surface = "agent"     // features.agent_view: the Messages tab, agent sessions
	SurfaceAssistant Surface = "assistant" // features.assistant_view: the split view
)

// Manifest is a Slack app manifest (https://api.slack.com/reference/manifests), the
// subset threadwright fills in.
type Manifest struct {
	DisplayInformation struct {
		Name            string `yaml:"name"`
		Description     string `yaml:"description"`
		BackgroundColor string `yaml:"background_color"`
	} `yaml:"display_information"`
	Features struct {
		AppHome struct {
			MessagesTabEnabled         bool `yaml:"messages_tab_enabled"`
			MessagesTabReadOnlyEnabled bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		BotUser struct {
			DisplayName  string `yaml:"display_name"`
			AlwaysOnline bool   `yaml:"always_online"`
		} `yaml:"bot_user"`
		// AssistantView turns on Slack's assistant view: the app's split view with
		// suggested prompts and thread titles (https://docs.slack.dev/ai).
		AssistantView *AssistantView `yaml:"assistant_view,omitempty"`
		// AgentView turns on Slack's agent messaging experience: conversations in the
		// app's Messages tab, agent sessions with a native Stop
		// (https://docs.slack.dev/ai/agent-sessions).
		AgentView     *slack.AgentView `yaml:"agent_view,omitempty"`
		Shortcuts     []Shortcut       `yaml:"shortcuts"`
		SlashCommands []SlashCommand   `yaml:"slash_commands"`
	} `yaml:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			BotEvents []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		Interactivity struct {
			IsEnabled bool `yaml:"is_enabled"`
		} `yaml:"interactivity"`
		OrgDeployEnabled     bool `yaml:"org_deploy_enabled"`
		SocketModeEnabled    bool `yaml:"socket_mode_enabled"`
		TokenRotationEnabled bool `yaml:"token_rotation_enabled"`
	} `yaml:"settings"`
}

// AssistantView is a manifest's features.assistant_view: the description shown in
// the assistant view, and the prompts suggested before the app sets its own
// (assistant.threads.setSuggestedPrompts), at most four.
type AssistantView struct {
	AssistantDescription string            `yaml:"assistant_description"`
	SuggestedPrompts     []SuggestedPrompt `yaml:"suggested_prompts,omitempty"`
}

// SuggestedPrompt is one of an AssistantView's suggested prompts.
type SuggestedPrompt struct {
	Title   string `yaml:"title"`
	Message string `yaml:"message"`
}

// SlashCommand is one slash command of a manifest.
type SlashCommand struct {
	Command      string `yaml:"command"`
	Description  string `yaml:"description"`
	UsageHint    string `yaml:"usage_hint"`
	ShouldEscape bool   `yaml:"should_escape"`
}

// Shortcut is one shortcut of a manifest: "message" shortcuts appear in a message's
// "More actions" menu (https://docs.slack.dev/interactivity/implementing-shortcuts).
type Shortcut struct {
	Name        string `yaml:"name"`
	Type        string `yaml:"type"` // "message" or "global"
	CallbackID  string `yaml:"callback_id"`
	Description string `yaml:"description"`
}

// NewManifest is NewManifestFor the default surface, SurfaceAgent.
func NewManifest(name string) Manifest { return NewManifestFor(name, SurfaceAgent) }

// NewManifestFor returns threadwright's app manifest for an app named name: Socket
// Mode on, interactivity on, the /threadwright command, the message shortcut
// ShortcutCallbackID and BotScopes; on surface, the agent view (with AgentScopes and
// AgentEvents) or the assistant view (with BotEvents), each with
// conversation.DefaultSuggestedPrompts.
func NewManifestFor(name string, surface Surface) Manifest {
	var m Manifest
	m.DisplayInformation.Name = name
	m.DisplayInformation.Description = "LLM agents that work inside your Slack threads."
	m.DisplayInformation.BackgroundColor = "#1d3557"
	m.Features.AppHome.MessagesTabEnabled = true
	m.Features.BotUser.DisplayName = name
	m.Features.BotUser.AlwaysOnline = true
	const description = "Ask questions, run tools and start workflows; answers use the channel you are viewing."
	m.OAuthConfig.Scopes.Bot = BotScopes
	m.Settings.EventSubscriptions.BotEvents = BotEvents
	if surface == SurfaceAssistant {
		m.Features.AssistantView = &AssistantView{AssistantDescription: description}
		for _, p := range conversation.DefaultSuggestedPrompts {
			m.Features.AssistantView.SuggestedPrompts = append(m.Features.AssistantView.SuggestedPrompts, SuggestedPrompt(p))
		}
	} else {
		m.Features.AgentView = &slack.AgentView{AgentDescription: description}
		for _, p := range conversation.DefaultSuggestedPrompts {
			m.Features.AgentView.SuggestedPrompts = append(m.Features.AgentView.SuggestedPrompts, slack.ManifestSuggestedPrompt(p))
		}
		m.OAuthConfig.Scopes.Bot = append(slices.Clone(BotScopes), AgentScopes...)
		m.Settings.EventSubscriptions.BotEvents = AgentEvents
	}
	m.Features.Shortcuts = []Shortcut{{
		Name:        "Workflow commands",
		Type:        "message",
		CallbackID:  ShortcutCallbackID,
		Description: "Restart, edit, export or cancel this thread's workflow",
	}}
	m.Features.SlashCommands = []SlashCommand{{
		Command:     "/threadwright",
		Description: "Start and manage threadwright workflows",
		UsageHint:   conversation.CommandUsageHint,
	}}
	m.Settings.Interactivity.IsEnabled = true
	m.Settings.SocketModeEnabled = true
	return m
}

// YAML renders the manifest as YAML, the form Slack's "Create an app → From a manifest"
// accepts.
func (m Manifest) YAML() ([]byte, error) {
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("render manifest: %w", err)
	}
	return out, nil
}
