// The protocol's types for the host, all from schema/protocol.d.ts (generated
// from the Go types in internal/protocol; never copied by hand), and the
// method maps that type every request, notification and runtime→client request.
import type { ClientNotifications, ClientRequests, ServerNotifications, ServerRequests } from '../../schema/protocol';

export type * from '../../schema/protocol';

export type RequestMethod = keyof ClientRequests;
export type ParamsOf<M extends RequestMethod> = ClientRequests[M]['params'];
export type ResultOf<M extends RequestMethod> = ClientRequests[M]['result'];
/** A method without params takes none; the others take theirs; both take an AbortSignal. */
export type RequestArgs<M extends RequestMethod> = [ParamsOf<M>] extends [void] ? [params?: undefined, signal?: AbortSignal] : [params: ParamsOf<M>, signal?: AbortSignal];
export type NotificationMethod = keyof ClientNotifications;
export type ServerRequestMethod = keyof ServerRequests;
export type ServerNotificationMethod = keyof ServerNotifications;
export type ServerRequestHandler<M extends ServerRequestMethod> = (params: ServerRequests[M]['params'], signal: AbortSignal) => Promise<ServerRequests[M]['result']>;
export type ServerNotificationHandler<M extends ServerNotificationMethod> = (params: ServerNotifications[M]['params']) => void;
export type { ClientNotifications, ClientRequests, ServerNotifications, ServerRequests };
