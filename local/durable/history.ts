/**
 * Orchestration history as the Durable extension hands it to an out-of-process orchestrator: plain
 * objects in the wire shape `{ EventType, EventId, IsPlayed, Timestamp, ... }`, payloads as JSON
 * strings. Only the event types the embedded driver produces are modelled.
 */

export const HistoryEventType = {
  ExecutionStarted: 0,
  ExecutionCompleted: 1,
  TaskScheduled: 4,
  TaskCompleted: 5,
  TaskFailed: 6,
  TimerCreated: 10,
  TimerFired: 11,
  OrchestratorStarted: 12,
  OrchestratorCompleted: 13,
  EventRaised: 15,
} as const;

interface EventBase {
  /** The task or timer id for scheduling events; -1 for the others, as in DTFx. */
  EventId: number;
  IsPlayed: boolean;
  /** ISO 8601; the SDK parses it into a Date in place, so each episode gets fresh copies. */
  Timestamp: string;
}

export interface ExecutionStartedEvent extends EventBase {
  EventType: typeof HistoryEventType.ExecutionStarted;
  Name: string;
  Input: string;
}

export interface ExecutionCompletedEvent extends EventBase {
  EventType: typeof HistoryEventType.ExecutionCompleted;
  OrchestrationStatus: 'Completed' | 'Failed' | 'ContinuedAsNew';
  Result: string;
}

export interface TaskScheduledEvent extends EventBase {
  EventType: typeof HistoryEventType.TaskScheduled;
  Name: string;
  Input: string;
}

export interface TaskCompletedEvent extends EventBase {
  EventType: typeof HistoryEventType.TaskCompleted;
  TaskScheduledId: number;
  Result: string;
}

/** Structured failure, as the extension forwards it when the app registered an exception properties provider. */
export interface FailureDetailsPayload {
  ErrorType: string;
  ErrorMessage: string;
  StackTrace?: string;
  IsNonRetriable: boolean;
  Properties?: Record<string, unknown>;
}

export interface TaskFailedEvent extends EventBase {
  EventType: typeof HistoryEventType.TaskFailed;
  TaskScheduledId: number;
  Reason: string;
  Details: string;
  FailureDetails?: FailureDetailsPayload;
}

export interface TimerCreatedEvent extends EventBase {
  EventType: typeof HistoryEventType.TimerCreated;
  FireAt: string;
}

export interface TimerFiredEvent extends EventBase {
  EventType: typeof HistoryEventType.TimerFired;
  TimerId: number;
  FireAt: string;
}

export interface OrchestratorStartedEvent extends EventBase {
  EventType: typeof HistoryEventType.OrchestratorStarted;
}

export interface OrchestratorCompletedEvent extends EventBase {
  EventType: typeof HistoryEventType.OrchestratorCompleted;
}

export interface EventRaisedEvent extends EventBase {
  EventType: typeof HistoryEventType.EventRaised;
  Name: string;
  Input: string;
}

export type HistoryEvent =
  | ExecutionStartedEvent
  | ExecutionCompletedEvent
  | TaskScheduledEvent
  | TaskCompletedEvent
  | TaskFailedEvent
  | TimerCreatedEvent
  | TimerFiredEvent
  | OrchestratorStartedEvent
  | OrchestratorCompletedEvent
  | EventRaisedEvent;

const NO_ID = -1;

function base(at: number, eventId = NO_ID): EventBase {
  return { EventId: eventId, IsPlayed: false, Timestamp: new Date(at).toISOString() };
}

/** JSON as the extension stores payloads; `undefined` travels as `null`, as it does through the host. */
export function toJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

export function executionStarted(at: number, name: string, inputJson: string): ExecutionStartedEvent {
  return { ...base(at), EventType: HistoryEventType.ExecutionStarted, Name: name, Input: inputJson };
}

export function executionCompleted(
  at: number,
  status: ExecutionCompletedEvent['OrchestrationStatus'],
  result: string,
): ExecutionCompletedEvent {
  return {
    ...base(at),
    EventType: HistoryEventType.ExecutionCompleted,
    OrchestrationStatus: status,
    Result: result,
  };
}

export function orchestratorStarted(at: number): OrchestratorStartedEvent {
  return { ...base(at), EventType: HistoryEventType.OrchestratorStarted };
}

export function orchestratorCompleted(at: number): OrchestratorCompletedEvent {
  return { ...base(at), EventType: HistoryEventType.OrchestratorCompleted };
}

export function taskScheduled(at: number, taskId: number, name: string, input: unknown): TaskScheduledEvent {
  return { ...base(at, taskId), EventType: HistoryEventType.TaskScheduled, Name: name, Input: toJson(input) };
}

export function taskCompleted(at: number, taskId: number, resultJson: string): TaskCompletedEvent {
  return {
    ...base(at),
    EventType: HistoryEventType.TaskCompleted,
    TaskScheduledId: taskId,
    Result: resultJson,
  };
}

export function taskFailed(
  at: number,
  taskId: number,
  failure: { reason: string; details: string; failureDetails?: FailureDetailsPayload },
): TaskFailedEvent {
  const event: TaskFailedEvent = {
    ...base(at),
    EventType: HistoryEventType.TaskFailed,
    TaskScheduledId: taskId,
    Reason: failure.reason,
    Details: failure.details,
  };
  if (failure.failureDetails !== undefined) event.FailureDetails = failure.failureDetails;
  return event;
}

export function timerCreated(at: number, timerId: number, fireAt: number): TimerCreatedEvent {
  return {
    ...base(at, timerId),
    EventType: HistoryEventType.TimerCreated,
    FireAt: new Date(fireAt).toISOString(),
  };
}

export function timerFired(at: number, timerId: number, fireAt: number): TimerFiredEvent {
  return {
    ...base(at),
    EventType: HistoryEventType.TimerFired,
    TimerId: timerId,
    FireAt: new Date(fireAt).toISOString(),
  };
}

export function eventRaised(at: number, name: string, data: unknown): EventRaisedEvent {
  return { ...base(at), EventType: HistoryEventType.EventRaised, Name: name, Input: toJson(data) };
}

/** Copies, because the SDK rewrites `Timestamp` into a Date on the objects it is given. */
export function copyEvents(events: readonly HistoryEvent[], isPlayed: boolean): HistoryEvent[] {
  return events.map((event) => ({ ...event, IsPlayed: isPlayed }));
}
