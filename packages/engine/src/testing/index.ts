export {
  ScriptedModel,
  toolResults,
  firstUserInput,
  type ScriptContext,
  type ScriptedReply,
  type ScriptedModelOptions,
} from './scripted-model.js';
export * from './fake-openai-server.js';
