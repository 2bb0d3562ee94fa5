/** The envelope: an event as the outside sees it, the body of every delivery and an item of the event feed. */
export interface Envelope {
  eventId: string;
  eventType: string;
  timestamp: string;
  tenantId: string;
  /** The event's place in the store's sequence: receivers drop an event older than one they already applied. */
  sequence: number;
  data: unknown;
}
