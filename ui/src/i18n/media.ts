// Strings of what tools return besides text (images, sounds, structured content) and of the
// provider's vision setting, in both languages.
export const mediaEn = {
  mediaImage: "Image {n} from the tool ({type}, {size})",
  mediaAudio: "Sound {n} from the tool ({type}, {size})",
  mediaEnlarge: "Show image {n} full size",
  mediaClose: "Close",
  mediaDialog: "Image {n} from {tool}",
  mediaSection: "Images and sounds",
  structuredSection: "Structured content",
  structuredField: "Field",
  structuredValue: "Value",
  providerVision: "The model sees images",
  providerVisionAuto: "As the server says",
  providerVisionOn: "Yes",
  providerVisionOff: "No",
  providerVisionHint:
    "Images that tools return go to a model that sees them; one that does not is told what came back. Ollama, llama.cpp and LM Studio say whether their model does; elsewhere it is taken as no.",
};

export const mediaZh: Record<keyof typeof mediaEn, string> = {
  mediaImage: "工具返回的图片 {n}（{type}，{size}）",
  mediaAudio: "工具返回的音频 {n}（{type}，{size}）",
  mediaEnlarge: "查看图片 {n} 原图",
  mediaClose: "关闭",
  mediaDialog: "{tool} 返回的图片 {n}",
  mediaSection: "图片和音频",
  structuredSection: "结构化内容",
  structuredField: "字段",
  structuredValue: "值",
  providerVision: "模型能看图片",
  providerVisionAuto: "按服务器所报",
  providerVisionOn: "是",
  providerVisionOff: "否",
  providerVisionHint:
    "工具返回的图片会发给能看图片的模型；不能看的模型只会被告知返回了什么。Ollama、llama.cpp 和 LM Studio 会说明其模型能否看图片；其他服务器按“否”处理。",
};
