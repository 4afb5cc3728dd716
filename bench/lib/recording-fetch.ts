// A `fetch` for a client under measurement: records when each request left (wall clock, comparable
// between processes on one machine) and what it was answered. The client retries 429s silently, so
// they are counted here, on the wire.

export interface SentRequest {
  at: number;
  status: number;
}

export function recordingFetch(): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const recording: typeof fetch = async (input, init) => {
    const record = { at: Date.now(), status: 0 };
    sent.push(record);
    const response = await fetch(input, init);
    record.status = response.status;
    return response;
  };
  return { fetch: recording, sent };
}
