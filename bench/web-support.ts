/** Posts one bridge event to a running server (the web benchmarks seed their sessions this way). */
export async function post(base: string, event: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${base}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (!res.ok) throw new Error(`${String(event.type)}: ${res.status} ${await res.text()}`);
}
