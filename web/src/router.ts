import { createRouter, createWebHistory } from 'vue-router';
import SessionChangesView from './views/SessionChangesView.vue';
import SessionView from './views/SessionView.vue';
import SessionsView from './views/SessionsView.vue';
import ToolsView from './views/ToolsView.vue';

/** History-mode routes; the server answers unknown paths with index.html so deep links work. */
export const router = createRouter({
  history: createWebHistory(),
  routes: [
    { path: '/', name: 'sessions', component: SessionsView },
    { path: '/sessions/:id', name: 'session', component: SessionView, props: true },
    { path: '/sessions/:id/changes', name: 'session-changes', component: SessionChangesView, props: true },
    { path: '/tools', name: 'tools', component: ToolsView },
    { path: '/:unknown(.*)*', redirect: '/' },
  ],
});
