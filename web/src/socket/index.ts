/** The typed socket.io client of CONTRACT section 4 (one socket, renewed subscriptions on reconnect). */
export * from './client.ts';
