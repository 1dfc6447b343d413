package protocol

import "reflect"

// Direction says who sends a method and whether it is answered.
type Direction int

// The directions.
const (
	// ClientRequest is sent by the client and answered by the runtime.
	ClientRequest Direction = iota
	// ClientNotification is sent by the client, unanswered.
	ClientNotification
	// ServerRequest is sent by the runtime and answered by the client.
	ServerRequest
	// ServerNotification is sent by the runtime, unanswered.
	ServerNotification
)

func (d Direction) String() string {
	switch d {
	case ClientRequest:
		return "clientRequest"
	case ClientNotification:
		return "clientNotification"
	case ServerRequest:
		return "serverRequest"
	case ServerNotification:
		return "serverNotification"
	}
	return "unknown"
}

// Method describes one method of the protocol: its name, its direction and
// the Go types of its params and result. Params is nil for a method without
// params; Result is nil for a notification and for a request whose result
// is null.
type Method struct {
	Name      string
	Direction Direction
	Params    reflect.Type
	Result    reflect.Type
}

func request[P, R any](name string) Method {
	return Method{name, ClientRequest, reflect.TypeFor[P](), reflect.TypeFor[R]()}
}

func requestNoParams[R any](name string) Method {
	return Method{name, ClientRequest, nil, reflect.TypeFor[R]()}
}

func notification[P any](d Direction, name string) Method {
	return Method{name, d, reflect.TypeFor[P](), nil}
}

// Methods lists every method of protocol.md and the addendum, with its
// params and result types.
var Methods = []Method{
	request[InitializeParams, InitializeResult](MethodInitialize),
	{MethodShutdown, ClientRequest, nil, nil},
	{MethodExit, ClientNotification, nil, nil},
	notification[CancelParams](ClientNotification, MethodCancelRequest),

	requestNoParams[[]ProviderInfo](MethodProviderCaps),
	request[ProviderParams, ListModelsResult](MethodListModels),
	request[ProviderParams, ModelsResult](MethodModels),
	request[ProviderParams, ContextWindowResult](MethodContextWindow),
	request[ProviderParams, ProviderTestResult](MethodProviderTest),
	request[ChatSendParams, ChatResult](MethodChatSend),
	notification[ChatEventParams](ServerNotification, MethodChatEvent),

	request[WorkspaceOpenParams, WorkspaceSummary](MethodWorkspaceOpen),
	notification[WorkspaceProgressParams](ServerNotification, MethodWorkspaceProg),
	requestNoParams[WorkspaceSummary](MethodWorkspaceRefresh),
	notification[FilesChangedParams](ClientNotification, MethodFilesChanged),
	requestNoParams[WorkspaceSummary](MethodContextInspect),
	request[RetrieveParams, RetrieveResult](MethodContextRetrieve),
	request[RefineParams, RefineResult](MethodPromptRefine),
	request[GraphProjectParams, GraphProjectResult](MethodGraphProject),
	request[GraphFileParams, GraphFileResult](MethodGraphFile),

	request[AgentRunParams, AgentSummary](MethodAgentRun),
	request[ClaudeRunParams, AgentSummary](MethodClaudeRun),
	notification[AgentEventParams](ServerNotification, MethodAgentEvent),
	{MethodRequestApproval, ServerRequest, reflect.TypeFor[RequestApprovalParams](), reflect.TypeFor[RequestApprovalResult]()},
	{MethodAskUser, ServerRequest, reflect.TypeFor[AskUserParams](), reflect.TypeFor[AskUserResult]()},
	request[SteerParams, bool](MethodAgentSteer),
	request[CancelToolParams, bool](MethodAgentCancelTool),
	request[TaskIDParams, bool](MethodAgentCancelSubagent),
	requestNoParams[TasksResult](MethodAgentTasks),
	request[TaskIDParams, TaskResult](MethodAgentTask),
	request[TaskIDParams, bool](MethodAgentDeleteTask),
	request[TaskIDParams, ReplayResult](MethodAgentReplay),
	request[BestOfParams, BestOfResult](MethodAgentBestOf),
	request[WorktreeNameParams, WorktreeApplyResult](MethodWorktreesApply),
	request[WorktreeNameParams, WorktreeDiscardResult](MethodWorktreesDiscard),
	requestNoParams[WorktreesListResult](MethodWorktreesList),

	requestNoParams[ToolsListResult](MethodToolsList),
	request[ToolsCallParams, ToolsCallResult](MethodToolsCall),
	requestNoParams[EditsListResult](MethodEditsList),
	requestNoParams[EditsPendingResult](MethodEditsPending),
	request[PathsParams, KeepResult](MethodEditsKeep),
	request[PathsParams, RevertResult](MethodEditsRevert),
	request[UndoParams, UndoResult](MethodEditsUndo),

	request[ConfigHooksParams, ConfigHooksResult](MethodConfigHooks),
	request[MCPConfigureParams, MCPStatus](MethodMCPConfigure),
	requestNoParams[MCPStatus](MethodMCPStatus),
	requestNoParams[SkillsListResult](MethodSkillsList),
	request[SkillsResolveParams, SkillsResolveResult](MethodSkillsResolve),
}

// MethodByName returns the method named name.
func MethodByName(name string) (Method, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// Unions maps each closed interface of the protocol to its member types:
// the JSON form of the interface is one of theirs.
var Unions = map[reflect.Type][]reflect.Type{
	reflect.TypeFor[AgentEvent](): typesOf(AgentEvents),
	reflect.TypeFor[ChatEvent]():  typesOf(ChatEvents),
	reflect.TypeFor[Candidate]():  {reflect.TypeFor[FinishedCandidate](), reflect.TypeFor[FailedCandidate]()},
}

func typesOf[E any](list []E) []reflect.Type {
	out := make([]reflect.Type, len(list))
	for i, e := range list {
		out[i] = reflect.TypeOf(e)
	}
	return out
}
